package org.fanstore.runtime.fetch;

import java.util.concurrent.atomic.AtomicBoolean;
import jnr.ffi.LastError;
import jnr.ffi.Runtime;
import org.fanstore.runtime.shm.NativeCalls;

/**
 * The calling thread's CPU priority: the threads serving peers' pulls take the lowest (README, "Peers' pulls are
 * served at the lowest CPU priority"). Linux keeps the nice value per thread, and setpriority(PRIO_PROCESS, 0, ...)
 * changes the calling thread's only. Lowering needs no privilege; raising it back would, so a thread that lowered
 * its priority serves pulls for the rest of its life.
 */
final class CpuPriority {
    /** The lowest priority a thread can take: nice 19. */
    static final int LOWEST = 19;
    private static final int PRIO_PROCESS = 0;
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    private CpuPriority() {
    }

    /**
     * Gives the calling thread the lowest CPU priority; where the OS refuses, it keeps its own and the rank says so
     * once on stderr ({@code rank} names it). Returns whether the call took.
     */
    static boolean lowest(int rank) {
        int errno;
        try {
            if (NativeCalls.LIBC.setpriority(PRIO_PROCESS, 0, LOWEST) == 0) {
                return true;
            }
            errno = LastError.getLastError(Runtime.getSystemRuntime());
        } catch (LinkageError e) {
            errno = -1;
        }
        if (WARNED.compareAndSet(false, true)) {
            System.err.println("fanstore rank " + rank + ": could not lower the CPU priority of the threads serving"
                    + " peers' pulls (" + (errno < 0 ? "no setpriority here" : "errno " + errno) + "); they run at"
                    + " normal priority");
        }
        return false;
    }
}
