package org.fanstore.runtime.metadata;

import static org.fanstore.prep.format.FileModes.S_IFDIR;
import static org.fanstore.prep.format.FileModes.S_IFLNK;
import static org.fanstore.prep.format.FileModes.S_IFREG;


/**
 * One name in the job's namespace, as handed to {@link MetadataTableWriter}.
 *
 * @param key        path below the mount point, no leading '/', any bytes but NUL; "" is the root
 * @param mode       st_mode with the S_IFMT type bits
 * @param size       st_size of a regular file (the writer fixes directories to 4096 and symlinks to the
 *                   target length, as lstat reports them)
 * @param mtimeSec   modification time, seconds since the epoch
 * @param mtimeNsec  nanoseconds part, 0..999,999,999
 * @param uid        owner user
 * @param gid        owner group
 * @param flags      {@link MetadataTableDescriptor#FLAG_LOCAL_RAW} and friends
 * @param ownerRank  the rank whose local disk holds the file
 * @param linkTarget a symlink's target bytes; null for everything else
 * Arrays are held, not copied: callers must not change them after handing them over (equality is by reference).
 */
public record NamespaceEntry(
    byte[] key, int mode, long size, long mtimeSec, int mtimeNsec, int uid, int gid, int flags, int ownerRank,
    byte[] linkTarget) {
    public static final int DEFAULT_DIRECTORY_MODE = S_IFDIR | 0755;

    public static NamespaceEntry file(
        final byte[] key, final int permissions, final long size, final long mtimeSec, final int mtimeNsec,
        final int flags, final int ownerRank) {
        return new NamespaceEntry(key, S_IFREG | permissions, size, mtimeSec, mtimeNsec, 0, 0, flags, ownerRank, null);
    }

    public static NamespaceEntry directory(final byte[] key, final long mtimeSec) {
        return new NamespaceEntry(key, DEFAULT_DIRECTORY_MODE, 0, mtimeSec, 0, 0, 0, 0, 0, null);
    }

    public static NamespaceEntry symlink(final byte[] key, final byte[] target, final long mtimeSec) {
        return new NamespaceEntry(key, S_IFLNK | 0777, target.length, mtimeSec, 0, 0, 0, 0, 0, target);
    }
}
