package org.fanstore.prep.format.table;

import org.fanstore.prep.format.FileModes;

/**
 * What every entry handed to {@link MetadataTableWriter} must satisfy on its own (README.md "Writer rules"), checked
 * as it enters a {@link NamespaceColumns}: each failure is one line naming the key.
 */
final class NamespaceChecks {
    /** mtimes are stored as signed 64-bit nanoseconds: seconds within +-(2^63 - 1) / 10^9, less one for nsec. */
    private static final long MAX_MTIME_SEC = Long.MAX_VALUE / 1_000_000_000L - 1;
    private static final long MIN_MTIME_SEC = -MAX_MTIME_SEC;

    private NamespaceChecks() {
    }

    static void checkEntry(final byte[] key, final int mode, final long size, final long mtimeSec,
        final int mtimeNsec, final int flags, final int partition, final byte[] linkTarget, final long bodyOffset,
        final long storedLength, final int partitions, final int broadcastPartitions) {
        if (key == null) {
            throw new IllegalArgumentException("namespace entry without a key");
        }
        checkKey(key);
        if (mtimeNsec < 0 || mtimeNsec > 999_999_999) {
            throw new IllegalArgumentException(KeyText.of(key) + ": mtime nanoseconds " + mtimeNsec);
        }
        if (mtimeSec < MIN_MTIME_SEC || mtimeSec > MAX_MTIME_SEC) {
            throw new IllegalArgumentException(KeyText.of(key) + ": mtime " + mtimeSec + " s is outside the years "
                + "1678-2262 the table holds (64-bit nanoseconds); touch the file and prep again");
        }
        if (FileModes.isRegular(mode) && (size < 0 || size > MetadataTableDescriptor.MAX_U48 ||
            bodyOffset < 0 || bodyOffset > MetadataTableDescriptor.MAX_U48)) {
            throw new IllegalArgumentException(KeyText.of(key) + ": size " + size + " or body offset "
                + bodyOffset + " beyond the 2^48 bytes the table holds");
        }
        if ((flags & MetadataTableDescriptor.FLAG_COMPRESSED) != 0 && (storedLength >>> 32) != 0) {
            throw new IllegalArgumentException(KeyText.of(key) + ": compressed body of " + storedLength
                + " bytes, the table holds below 4 GiB (prep stores larger bodies raw)");
        }
        if ((flags & ~(MetadataTableDescriptor.FLAG_UNPACKABLE | MetadataTableDescriptor.FLAG_COMPRESSED)) != 0
            || (!FileModes.isRegular(mode) && flags != 0)) {
            throw new IllegalArgumentException(KeyText.of(key) + ": flags " + flags + " on mode 0"
                + Integer.toOctalString(mode));
        }
        final int p = partition;
        final boolean inRange = FileModes.isRegular(mode)
            ? (p >= 0 ? p < partitions : p != MetadataTableDescriptor.NO_PARTITION && -1L - p < broadcastPartitions)
            : p == MetadataTableDescriptor.NO_PARTITION;
        if (!inRange) {
            throw new IllegalArgumentException(KeyText.of(key) + ": partition " + p + " (a regular file needs one of "
                + partitions + " regular or " + broadcastPartitions + " broadcast partitions, anything else none)");
        }
        final boolean symlink = FileModes.isSymlink(mode);
        if (symlink != (linkTarget != null)) {
            throw new IllegalArgumentException(KeyText.of(key) + ": a link target is required for, and only for, " +
                "a symlink (mode 0" + Integer.toOctalString(mode) + ")");
        }
        if (symlink && indexOfNul(linkTarget) >= 0) {
            throw new IllegalArgumentException(KeyText.of(key) + ": symlink target holds a NUL byte");
        }
        if (key.length == 0 && !FileModes.isDirectory(mode)) {
            throw new IllegalArgumentException("the root \"\" must be a directory");
        }
    }

    /** Keys are normalised paths below the mount point: no leading or trailing '/', no empty, "." or ".."
     * component, no NUL. "" (the root) is the one key with no component. */
    private static void checkKey(final byte[] key) {
        int start = 0;
        for (int i = 0; i <= key.length && key.length > 0; i++) {
            if (i < key.length && key[i] == 0) {
                throw new IllegalArgumentException("key holds a NUL byte: " + KeyText.of(key));
            }
            if (i == key.length || key[i] == '/') {
                final int length = i - start;
                final boolean dots = (length == 1 && key[start] == '.') ||
                    (length == 2 && key[start] == '.' && key[start + 1] == '.');
                if (length == 0 || dots) {
                    throw new IllegalArgumentException("key is not a normalised relative path: " + KeyText.of(key));
                }
                if (length > MetadataTableDescriptor.MAX_NAME_LENGTH) {
                    throw new IllegalArgumentException("name of " + length + " bytes (over "
                        + MetadataTableDescriptor.MAX_NAME_LENGTH + ") in " + KeyText.of(key));
                }
                start = i + 1;
            }
        }
    }

    private static int indexOfNul(final byte[] bytes) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                return i;
            }
        }
        return -1;
    }
}
