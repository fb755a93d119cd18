package org.fanstore.runtime.open;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The open workers (open/README.md): a few kept, more started on demand so a request never queues behind another's
 * I/O, bounded by the control file's slots. Each request in progress holds a slot until it is answered and makes at
 * most two tasks at once ({@link LandedFirst}'s hand-back starts while the first task is returning), so twice the
 * slots is never reached while the slots hold; past it (a swept stale slot reused while its task still runs, or
 * shutdown) {@code execute} throws and the caller answers EIO, as it does at shutdown: never runs the task itself.
 */
public final class OpenWorkers {
    /** Workers kept when idle: the pool's size before it grew on demand. */
    static final int CORE = 4;
    /** An idle worker beyond the core ends after this (the JDK's cached pool's keep-alive). */
    static final long IDLE_SECONDS = 60;

    private OpenWorkers() {
    }

    /** A pool for a control file of {@code slots} slots, its threads from {@code threads}. */
    public static ExecutorService start(int slots, ThreadFactory threads) {
        return new ThreadPoolExecutor(CORE, Math.max(CORE, 2 * slots), IDLE_SECONDS, TimeUnit.SECONDS,
                new SynchronousQueue<>(), threads, new ThreadPoolExecutor.AbortPolicy());
    }
}
