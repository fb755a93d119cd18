package org.fanstore.runtime.index;

/**
 * One namespace entry as the ranks exchange it: what the shared table needs (stat fields), plus where the
 * body lies (partition, offset, lengths, codec, CRC) so any rank can materialise it. {@code key} is the path
 * below the mount point ({@code <dataset>/<path>}); {@code partition} is the regular partition index, or
 * {@code -1 - i} for broadcast partition i (held by every rank).
 */
public record IndexRecord(byte[] key, int type, int mode, int uid, int gid, long mtimeSec, int mtimeNsec,
                          long rawLength, long storedLength, long bodyOffset, int codec, int crc32c, int partition,
                          byte[] linkTarget) {

    public static final int TYPE_FILE = 1;
    public static final int TYPE_DIR = 2;
    public static final int TYPE_SYMLINK = 3;

    public boolean broadcast() {
        return partition < 0;
    }

    public static int broadcastPartition(int index) {
        return -1 - index;
    }
}
