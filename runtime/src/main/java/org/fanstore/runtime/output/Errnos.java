package org.fanstore.runtime.output;

/** The errno values output operations answer with (positive; Linux numbers). */
public final class Errnos {
    public static final int ENOENT = 2;
    public static final int EIO = 5;
    public static final int EBADF = 9;
    public static final int EEXIST = 17;
    public static final int ENOTDIR = 20;
    public static final int EISDIR = 21;
    public static final int EINVAL = 22;
    public static final int ENOSPC = 28;
    public static final int EROFS = 30;
    public static final int ENAMETOOLONG = 36;
    public static final int ENOTEMPTY = 39;

    private Errnos() {
    }
}
