package org.fanstore.prep;

import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionEntry;

/**
 * One thing found under --input: its dataset path bytes and its lstat fields. For a symlink {@code linkTarget}
 * holds the target bytes and {@code size} their length. Where to read it is {@link SourceFiles}'s business (the
 * input root plus the path): a {@code Path} per entry cost ~280 bytes of heap per file (README "Memory").
 */
record SourceEntry(byte[] path, int type, int mode, int uid, int gid, long mtimeSec, int mtimeNsec,
    long size, byte[] linkTarget) {
    boolean isFile() {
        return type == PartitionDescriptor.TYPE_FILE;
    }

    boolean isDir() {
        return type == PartitionDescriptor.TYPE_DIRECTORY;
    }

    boolean isSymlink() {
        return type == PartitionDescriptor.TYPE_SYMLINK;
    }

    /** The table entry, body fields still empty (the writer fills them). */
    PartitionEntry toEntry() {
        return new PartitionEntry(path, type, PartitionDescriptor.CODEC_RAW, mode, uid, gid, mtimeSec, mtimeNsec,
            0, 0, 0, 0);
    }
}
