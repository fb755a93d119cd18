package org.fanstore.prep.format;

import java.util.Arrays;

/**
 * One entry of a partition's table. {@code path} is the raw path bytes relative to the dataset root (the root
 * directory is the empty path); {@code bodyOffset} is absolute in the partition file.
 */
public record PartitionEntry(
    byte[] path,
    int type,
    int codec,
    int mode,
    int uid,
    int gid,
    long mtimeSec,
    int mtimeNsec,
    long rawLength,
    long storedLength,
    long bodyOffset,
    int crc32c) {
    public boolean isFile() {
        return type == PartitionDescriptor.TYPE_FILE;
    }

    public boolean isDir() {
        return type == PartitionDescriptor.TYPE_DIRECTORY;
    }

    public boolean isSymlink() {
        return type == PartitionDescriptor.TYPE_SYMLINK;
    }

    /** The path for messages: UTF-8 where valid, other bytes as {@code \xNN}; the root is {@code "."}. */
    public String pathString() {
        return PathBytes.display(path);
    }

    /** The same entry with its body somewhere else in the file (the writer learns offsets as it goes). */
    public PartitionEntry withBody(final int newCodec, final long newRawLength, final long newStoredLength,
        final long newBodyOffset, final int newCrc32c) {
        return new PartitionEntry(path, type, newCodec, mode, uid, gid, mtimeSec, mtimeNsec, newRawLength,
            newStoredLength, newBodyOffset, newCrc32c);
    }

    /** The same entry under another name (the runtime keys entries by their path below the mount point). */
    public PartitionEntry withPath(final byte[] newPath) {
        return new PartitionEntry(newPath, type, codec, mode, uid, gid, mtimeSec, mtimeNsec, rawLength, storedLength,
            bodyOffset, crc32c);
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof PartitionEntry e && Arrays.equals(path, e.path) && type == e.type && codec == e.codec &&
            mode == e.mode && uid == e.uid && gid == e.gid && mtimeSec == e.mtimeSec && mtimeNsec == e.mtimeNsec &&
            rawLength == e.rawLength && storedLength == e.storedLength && bodyOffset == e.bodyOffset &&
            crc32c == e.crc32c;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(path) * 31 + Long.hashCode(bodyOffset);
    }

    @Override
    public String toString() {
        return "PartitionEntry[" + pathString() + " type=" + type + " codec=" + codec + " raw=" + rawLength +
            " stored=" + storedLength + " at=" + bodyOffset + "]";
    }
}
