package org.fanstore.launcher.run;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.prep.store.ObjectStore;
import org.fanstore.prep.store.StoreException;
import org.fanstore.runtime.home.DatasetHome;

/**
 * An s3:// dataset's check in the launcher: the store's client from the environment (no credentials: one line) and
 * the manifest's HEAD (missing: no dataset, or one half uploaded). It costs the SDK's start (~0.5 s of class loading)
 * and a round trip, so it runs on its own thread ({@code fanstore-bucket-check}) from the start of {@code run}, while
 * the launcher starts the runtimes, and is awaited where its answer is needed: before the bucket rendezvous of a job
 * spanning nodes, else before the runtimes' ready lines are read. A failed check is the job's one line; the
 * runtimes started meanwhile are torn down unheard (they report on stdout, which the launcher then never reads).
 */
final class BucketCheck implements AutoCloseable {
    /** The client (null after a failure), or the one line and the exit status. */
    record Outcome(ObjectStore store, String problem, int status) {
    }

    private final CompletableFuture<Outcome> outcome = new CompletableFuture<>();
    private final DatasetLocation dataset;

    private BucketCheck(DatasetLocation dataset) {
        this.dataset = dataset;
    }

    static BucketCheck start(DatasetLocation dataset) {
        BucketCheck check = new BucketCheck(dataset);
        Thread t = new Thread(() -> {
            try {
                check.outcome.complete(check(dataset));
            } catch (Throwable e) {   // an Error too: await() must never wait for a thread that died
                check.outcome.completeExceptionally(e);
            }
        }, "fanstore-bucket-check");
        t.setDaemon(true);
        t.start();
        return check;
    }

    /** The outcome; its wait is the client's own bounds (prep/store README: connect, request and retry bounds). */
    Outcome await() throws InterruptedException {
        try {
            return outcome.get();
        } catch (ExecutionException e) {
            return new Outcome(null, "cannot check " + dataset + ": the object store's client did not start ("
                    + e.getCause().getMessage() + ")", 1);
        }
    }

    private static Outcome check(DatasetLocation dataset) {
        ObjectStore store = null;
        try {
            store = ObjectStore.fromEnvironment();
            store.size(dataset.bucket(), dataset.objectKey(Manifest.FILE_NAME));
            return new Outcome(store, null, 0);
        } catch (StoreException e) {
            String line = e.getMessage();
            if (e.reason() == StoreException.Reason.NO_KEY && store != null) {
                try {
                    line = DatasetHome.missingManifest(store, dataset);
                } catch (IOException listing) {
                    line = listing.getMessage();
                }
            }
            if (store != null) {
                store.close();
            }
            return new Outcome(null, line, switch (e.reason()) {
                case NOT_ANSWERING, THROTTLED, FAILED -> 1;
                default -> 2;
            });
        } catch (RuntimeException e) {
            if (store != null) {
                store.close();
            }
            return new Outcome(null, dataset + ": the object store's client failed (" + e.getMessage() + ")", 1);
        }
    }

    /** Closes the client, now or when a check still running ends. */
    @Override
    public void close() {
        outcome.thenAccept(o -> {
            if (o.store() != null) {
                o.store().close();
            }
        });
    }
}
