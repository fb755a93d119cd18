package org.fanstore.prep.format;

/**
 * The POSIX file-type bits of {@code st_mode} (Linux values, octal as in {@code <sys/stat.h>}). Partitions
 * and metadata tables store st_mode with these bits included; every Java reader and writer of a mode uses
 * this class rather than its own copy.
 */
public final class FileModes {
    /** Mask of the file-type bits. */
    public static final int S_IFMT = 0170000;
    public static final int S_IFDIR = 0040000;
    public static final int S_IFREG = 0100000;
    public static final int S_IFLNK = 0120000;
    /** Types fanstore never stores; readers name them when they refuse one. */
    public static final int S_IFIFO = 0010000;
    public static final int S_IFCHR = 0020000;
    public static final int S_IFBLK = 0060000;
    public static final int S_IFSOCK = 0140000;

    private FileModes() {
    }

    /** The file-type bits of {@code mode}: one of the S_IF* constants for the types fanstore stores. */
    public static int type(final int mode) {
        return mode & S_IFMT;
    }

    public static boolean isDirectory(final int mode) {
        return type(mode) == S_IFDIR;
    }

    public static boolean isRegular(final int mode) {
        return type(mode) == S_IFREG;
    }

    public static boolean isSymlink(final int mode) {
        return type(mode) == S_IFLNK;
    }
}
