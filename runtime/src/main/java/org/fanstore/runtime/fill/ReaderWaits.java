package org.fanstore.runtime.fill;

import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Consumer;

/**
 * Readers waiting for ranges of kept partitions, without a thread each (README.md, "A reader's wait holds no
 * thread"): a wait is a record here, answered by the fill's driver when its ranges landed, its partition became a
 * local copy or is no longer kept, the home it needs is marked down, the fill stops, or its deadline passed. The
 * driver looks at every wait whenever it wakes (on every event, notified on {@link Fill}'s lock) and sleeps no
 * longer than the earliest deadline. Guarded by that lock; the answers run outside it.
 */
final class ReaderWaits {
    private final Fill fill;
    private final List<Wait> waiting = new ArrayList<>();
    /** The driver ended: no wait is kept from now on, each is answered with what there is. */
    private boolean driverGone;

    ReaderWaits(Fill fill) {
        this.fill = fill;
    }

    /** One reader's wait for bytes [offset, offset + length) of p until deadline ({@link Governor#now()}). */
    private static final class Wait {
        final int p;
        final long offset;
        final long length;
        final long deadline;
        final Consumer<FileChannel> then;
        FileChannel answer;

        Wait(int p, long offset, long length, long deadline, Consumer<FileChannel> then) {
            this.p = p;
            this.offset = offset;
            this.length = length;
            this.deadline = deadline;
            this.then = then;
        }

        void answer() {
            try {
                then.accept(answer);
            } catch (RuntimeException e) {
                System.err.println("fanstore: a reader's wait for its bytes could not be answered: " + e.getMessage());
            }
        }
    }

    /** {@link Fill#whenBytes}: answered at once on this thread when it can be, else kept for the driver. */
    void add(int p, long offset, long length, long deadline, Consumer<FileChannel> then) {
        Wait w = new Wait(p, offset, length, deadline, then);
        synchronized (fill.lock) {
            if (!settle(w, fill.governor().now())) {
                fill.scheduler.want(p, offset, length);   // its ranges go first (README.md, "The scheduler")
                waiting.add(w);
                fill.lock.notifyAll();
                return;
            }
        }
        w.answer();
    }

    /** Under the lock: whether w's answer is known at now; then it is in {@code w.answer} (null: not from here). */
    private boolean settle(Wait w, long now) {
        if (fill.local.holds(w.p)) {
            w.answer = fill.local.channel(w.p);
            return true;
        }
        if (fill.stopping || !fill.scheduler.keeps(w.p)) {
            return true;
        }
        FillFile f = fill.files.get(w.p);
        if (f != null && fill.scheduler.covers(w.p, w.offset, w.length)) {
            w.answer = f.channel;
            return true;
        }
        // the home stopped answering: its reader is refused at once, not after the wait; or the bound passed
        return driverGone || fill.scheduler.waitsOnDownHome(w.p, w.offset, w.length, now) || w.deadline - now <= 0;
    }

    /** Under the lock (the driver): takes the waits whose answer is known at now into {@code ready}. */
    void settled(long now, List<Runnable> ready) {
        for (Iterator<Wait> i = waiting.iterator(); i.hasNext(); ) {
            Wait w = i.next();
            if (settle(w, now)) {
                i.remove();
                ready.add(w::answer);
            }
        }
    }

    /** Under the lock: the earliest deadline of a wait, or Long.MAX_VALUE: the driver wakes by then. */
    long wakeAt() {
        long at = Long.MAX_VALUE;
        for (Wait w : waiting) {
            at = Math.min(at, w.deadline);
        }
        return at;
    }

    /** Under the lock (the driver, ending): every wait is answered with what there is, and later ones at once. */
    void driverGone(List<Runnable> ready) {
        driverGone = true;
        settled(fill.governor().now(), ready);
    }
}
