package org.fanstore.runtime;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.fanstore.runtime.liveness.RankFailedException;
import org.fanstore.runtime.stats.RankStats;
import org.fanstore.runtime.world.MpiWorld;

/**
 * The orderly end's wait among every rank of a whole world (NodeRuntime.finish): on a daemon thread, the fill stops
 * (before the barrier: its transfers in flight need the peers still serving), the barrier, then every rank's
 * statistics line to rank 0 (StatsExchange). A dead peer ends the wait within about a second (the liveness watch;
 * niodev alone would leave the barrier waiting), and so does a node loss (the world is left: liveness/README.md).
 */
final class FinalBarrier {
    private FinalBarrier() {
    }

    /** Every rank's statistics lines (rank 0) or this rank's, or an empty list when the wait was cut short. */
    static List<String> await(int rank, MpiWorld w, Runnable stopFill, RankStats stats,
                              CompletableFuture<RankFailedException> failedWhileFinishing,
                              CompletableFuture<RankFailedException> nodeLost) {
        CompletableFuture<List<String>> barrier = CompletableFuture.supplyAsync(() -> {
            try {
                stopFill.run();
                w.barrier(FINISH_TIMEOUT);
                return StatsExchange.gather(w, stats);  // after the barrier: nobody reads any more
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, r -> {
            Thread t = new Thread(r, "fanstore-final-barrier");
            t.setDaemon(true);
            t.start();
        });
        Throwable failed = null;
        try {
            Object ended = CompletableFuture.anyOf(barrier, failedWhileFinishing, nodeLost).get();
            if (ended instanceof RankFailedException e && !nodeLost.isDone()) {
                failed = e;
            } else if (ended instanceof List<?>) {
                return barrier.get();
            }
        } catch (ExecutionException e) {  // the barrier thread's IOException comes wrapped, any other bare
            failed = e.getCause() instanceof UncheckedIOException u ? u.getCause() : e.getCause();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (failed != null) {
            System.err.println("fanstore rank " + rank + ": not every rank finished cleanly: " + failed.getMessage());
        }
        return List.of();
    }
}
