package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.FileModes.S_IFDIR;
import static org.fanstore.prep.format.FileModes.S_IFLNK;
import static org.fanstore.prep.format.FileModes.S_IFREG;


/**
 * One name in a dataset's namespace, as handed to {@link MetadataTableWriter}.
 *
 * @param key          path below the mount point, no leading '/', any bytes but NUL; "" is the root
 * @param mode         st_mode with the S_IFMT type bits
 * @param size         st_size of a regular file (the writer fixes directories to 4096 and symlinks to the
 *                     target length, as lstat reports them)
 * @param mtimeSec     modification time, seconds since the epoch
 * @param mtimeNsec    nanoseconds part, 0..999,999,999
 * @param uid          owner user
 * @param gid          owner group
 * @param flags        {@link MetadataTableDescriptor#FLAG_UNPACKABLE}, {@link MetadataTableDescriptor#FLAG_COMPRESSED}
 * @param partition    the partition holding a regular file's body: p (regular), -1 - i (broadcast i);
 *                     {@link MetadataTableDescriptor#NO_PARTITION} for everything else
 * @param linkTarget   a symlink's target bytes; null for everything else
 * @param bodyOffset   where the stored body starts in its partition file (files only)
 * @param storedLength the stored body's length (files only)
 * @param crc32c       CRC32C of the raw bytes (files only)
 * @param codec        the body's codec, {@code PartitionDescriptor.CODEC_*} (files only)
 * Arrays are held, not copied: callers must not change them after handing them over (equality is by reference).
 */
public record NamespaceEntry(
    byte[] key, int mode, long size, long mtimeSec, int mtimeNsec, int uid, int gid, int flags, int partition,
    byte[] linkTarget, long bodyOffset, long storedLength, int crc32c, int codec) {
    public static final int DEFAULT_DIRECTORY_MODE = S_IFDIR | 0755;

    /** A regular file without body details (tests, and tables of trees whose files are read in place). */
    public static NamespaceEntry file(
        final byte[] key, final int permissions, final long size, final long mtimeSec, final int mtimeNsec,
        final int flags, final int partition) {
        return new NamespaceEntry(key, S_IFREG | permissions, size, mtimeSec, mtimeNsec, 0, 0, flags, partition, null,
            0, 0, 0, 0);
    }

    public static NamespaceEntry directory(final byte[] key, final long mtimeSec) {
        return new NamespaceEntry(key, DEFAULT_DIRECTORY_MODE, 0, mtimeSec, 0, 0, 0, 0,
            MetadataTableDescriptor.NO_PARTITION, null, 0, 0, 0, 0);
    }

    public static NamespaceEntry symlink(final byte[] key, final byte[] target, final long mtimeSec) {
        return new NamespaceEntry(key, S_IFLNK | 0777, target.length, mtimeSec, 0, 0, 0, 0,
            MetadataTableDescriptor.NO_PARTITION, target, 0, 0, 0, 0);
    }
}
