package org.fanstore.runtime.shm;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Lowers the calling thread's CPU priority (its Linux nice value, which is per thread). For the work nobody waits
 * on: the background pull of partitions and the serving of its ranges. On a node whose cores the training job
 * keeps busy (decoding, augmenting), that work then takes only what the job leaves idle, and readers' own opens and
 * fetches, on threads at the job's priority, go first. An unprivileged thread cannot raise its priority back, so
 * only threads that do nothing else call this.
 */
public final class BackgroundPriority {
    /** Nice steps below the runtime's own: at +10 a thread gets ~1/10 of a default thread's share of a core. */
    public static final int NICE = 10;
    private static final int LOWEST = 19;
    private static final int PRIO_PROCESS = 0;

    private BackgroundPriority() {
    }

    /** Daemon threads named {@code prefix-1}, {@code prefix-2}..., each lowered before it runs anything. */
    public static ThreadFactory threads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(() -> {
                lowerCurrentThread();
                r.run();
            }, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /**
     * Lowers the calling thread by {@link #NICE} steps (a job started under nice stays below it), at most to 19;
     * false when the system refused (the thread then runs as before).
     */
    public static boolean lowerCurrentThread() {
        try {
            int tid = NativeCalls.LIBC.gettid();
            int now = NativeCalls.LIBC.getpriority(PRIO_PROCESS, tid);   // -1 is also a valid nice value here
            return NativeCalls.LIBC.setpriority(PRIO_PROCESS, tid, Math.min(LOWEST, now + NICE)) == 0;
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            return false;
        }
    }
}
