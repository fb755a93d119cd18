package org.fanstore.runtime.placement;

import org.fanstore.prep.format.PartitionEntry;

/**
 * One namespace entry as the ranks exchange it: the partition's table entry as read (stat fields, and where
 * its body lies: offset, lengths, codec, CRC), so any rank can materialise it, plus the partition that holds
 * it. The entry is re-keyed: its path is the key below the mount point ({@code <dataset>/<path>}, the dataset
 * root being {@code <dataset>}), which is all a receiving rank needs. {@code partition} is the regular
 * partition index, or {@code -1 - i} for broadcast partition i (held by every rank).
 */
public record IndexRecord(PartitionEntry entry, int partition, byte[] linkTarget) {

    /** The record for {@code e} of the dataset named {@code datasetName}; {@code link} is a symlink's target. */
    public static IndexRecord of(byte[] datasetName, PartitionEntry e, int partition, byte[] link) {
        return new IndexRecord(e.withPath(keyOf(datasetName, e.path())), partition, link);
    }

    /** The path below the mount point. */
    public byte[] key() {
        return entry.path();
    }

    public boolean broadcast() {
        return partition < 0;
    }

    public static int broadcastPartition(int index) {
        return -1 - index;
    }

    static byte[] keyOf(byte[] name, byte[] path) {
        if (path.length == 0) {
            return name.clone();
        }
        byte[] key = new byte[name.length + 1 + path.length];
        System.arraycopy(name, 0, key, 0, name.length);
        key[name.length] = '/';
        System.arraycopy(path, 0, key, name.length + 1, path.length);
        return key;
    }
}
