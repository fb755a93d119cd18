package org.fanstore.runtime.open;

import java.nio.channels.FileChannel;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.fanstore.runtime.fill.Fill;
import org.fanstore.runtime.placement.BodyIndex;
import org.fanstore.runtime.shm.Errno;
import org.fanstore.runtime.stats.RemoteStage;

/**
 * An open of a file of a partition this node keeps and is still filling waits for the file's ranges without holding
 * an open worker (runtime/fill/README.md, "A reader's wait holds no thread"): it asks the fill for them ({@link
 * Fill#whenBytes}, first in its order, bounded by half the fetch timeout) and returns; the rest of the open (CRC
 * check, slice, decode, answer, or the read from the sources when they did not land in time) runs as a new task on
 * the open workers when the fill answers, or at once on this worker when the answer is known now.
 */
final class LandedFirst {
    /** What the wait for an entry's ranges gave: the channel to read them from, or null (read the sources). */
    record Landed(FileChannel channel, long asked, long landed, long resumed) {
    }

    /** The asker's mark in {@link #then}'s handshake: it returned before the fill answered. */
    private static final Landed RETURNED = new Landed(null, 0, 0, 0);

    private final Fill fill;
    private final BodyIndex bodies;
    private final ExecutorService workers;
    private final long boundNanos;

    LandedFirst(Fill fill, BodyIndex bodies, ExecutorService workers, long boundNanos) {
        this.fill = fill;
        this.bodies = bodies;
        this.workers = workers;
        this.boundNanos = boundNanos;
    }

    /**
     * Runs {@code rest} with entry index's landed ranges once the fill answered, or with null at once when its
     * partition is not being filled here (nothing to wait for). Never blocks: called on an open worker or on the
     * dispatcher thread, {@code rest} runs on the caller when the answer is known now, else on an open worker.
     */
    void then(int index, OpenTimer timer, Consumer<Landed> rest) {
        int p = bodies.partition(index);
        if (p == BodyIndex.NO_BODY || !fill.filling(p)) {
            rest.accept(null);
            return;
        }
        long asked = System.nanoTime();
        // whoever comes second runs the rest: this worker if the answer came before it returned, else a new task
        AtomicReference<Landed> early = new AtomicReference<>();
        fill.whenBytes(p, bodies.bodyOffset(index), bodies.storedLength(index), asked + boundNanos, channel -> {
            long landed = System.nanoTime();
            Landed got = new Landed(channel, asked, landed, landed);
            if (!early.compareAndSet(null, got)) {
                resume(got, timer, rest);
            }
        });
        if (!early.compareAndSet(null, RETURNED)) {
            rest.accept(early.get());
        }
    }

    /** The rest of an open, as a new task on the open workers: its wait there counts as queueing. */
    private void resume(Landed got, OpenTimer timer, Consumer<Landed> rest) {
        try {
            workers.execute(() -> {
                long resumed = System.nanoTime();
                timer.stage(RemoteStage.QUEUE, resumed - got.landed());
                rest.accept(new Landed(got.channel(), got.asked(), got.landed(), resumed));
            });
        } catch (RejectedExecutionException shuttingDown) {
            timer.error(Errno.EIO);
        }
    }
}
