package org.fanstore.runtime.shm;

import jnr.ffi.LastError;
import jnr.ffi.Runtime;

/**
 * Shared (non-private) futex wait/wake on a 32-bit word in a MAP_SHARED file mapping, so the kernel keys the
 * word by file and offset and other processes mapping the same file meet on it. The C twin uses FUTEX_WAIT /
 * FUTEX_WAKE on the same words (wire_client.c).
 */
public final class Futex {
    /** futex(2) syscall number: 202 on x86-64, 98 on aarch64 (asm-generic). */
    static final long SYS_FUTEX = sysFutex(System.getProperty("os.arch"));
    /** FUTEX_WAIT without FUTEX_PRIVATE_FLAG: the word is shared between processes. */
    static final int FUTEX_WAIT = 0;
    /** FUTEX_WAKE without FUTEX_PRIVATE_FLAG. */
    static final int FUTEX_WAKE = 1;
    /** Result of {@link #wait}: woken, or the word did not hold the expected value. */
    public static final int WOKEN = 0;
    /** errno EAGAIN: the word did not hold the expected value. */
    public static final int EAGAIN = 11;
    /** errno EINTR: interrupted by a signal. */
    public static final int EINTR = 4;
    /** errno ETIMEDOUT: the timeout passed. */
    public static final int ETIMEDOUT = 110;
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private Futex() {
    }

    static long sysFutex(final String arch) {
        switch (arch) {
            case "amd64":
            case "x86_64":
                return 202;
            case "aarch64":
                return 98;
            default:
                throw new UnsupportedOperationException("futex syscall number unknown for os.arch=" + arch);
        }
    }

    /**
     * Sleeps while the int at {@code address} equals {@code expected}, at most {@code timeoutNanos}.
     * Returns {@link #WOKEN}, {@link #EAGAIN}, {@link #ETIMEDOUT} or {@link #EINTR}; the caller re-checks its
     * condition in every case (wake-ups may be spurious).
     */
    public static int wait(final long address, final int expected, final long timeoutNanos) {
        final long[] timeout = {timeoutNanos / NANOS_PER_SECOND, timeoutNanos % NANOS_PER_SECOND};
        final long rc = NativeCalls.LIBC.syscall(SYS_FUTEX, address, FUTEX_WAIT, expected, timeout, 0, 0);
        return rc == 0 ? WOKEN : LastError.getLastError(Runtime.getSystemRuntime());
    }

    /** Wakes up to {@code count} waiters on the int at {@code address}; returns how many were woken. */
    public static int wake(final long address, final int count) {
        final long rc = NativeCalls.LIBC.syscall(SYS_FUTEX, address, FUTEX_WAKE, count, null, 0, 0);
        return rc < 0 ? 0 : (int)rc;
    }
}
