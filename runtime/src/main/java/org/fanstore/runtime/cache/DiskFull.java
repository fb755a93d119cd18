package org.fanstore.runtime.cache;

/**
 * Recognises a full file system in an I/O failure. Java reports ENOSPC only as text (strerror's, in the C locale
 * the JVM's native code uses), anywhere along the cause chain.
 */
public final class DiskFull {
    private DiskFull() {
    }

    /** Whether a full file system caused {@code e}. */
    public static boolean causedBy(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains("No space left on device")) {
                return true;
            }
        }
        return false;
    }
}
