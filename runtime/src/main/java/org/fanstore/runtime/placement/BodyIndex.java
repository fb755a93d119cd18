package org.fanstore.runtime.placement;

import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.prep.format.table.MetadataTableDescriptor;

/**
 * Where each table entry's body lies, indexed by metadata-table entry index: a view of the landed table's entries
 * and bodies section (prep wrote them; nothing is built per job). Directories and entries without a body have
 * partition {@link #NO_BODY}.
 */
public final class BodyIndex {
    public static final int NO_BODY = MetadataTableDescriptor.NO_PARTITION;

    private final MetadataTable table;

    public BodyIndex(MetadataTable table) {
        this.table = table;
    }

    public int entries() {
        return table.entryCount();
    }

    /** Regular partition index, {@code -1 - i} for broadcast partition i, or {@link #NO_BODY}. */
    public int partition(int index) {
        return table.partition(index);
    }

    public long bodyOffset(int index) {
        return table.bodyOffset(index);
    }

    public long storedLength(int index) {
        return table.storedLength(index);
    }

    public int codec(int index) {
        return table.codec(index);
    }

    public int crc32c(int index) {
        return table.crc32c(index);
    }

    /**
     * The first partition whose bodies, as the table places them, reach past the end the manifest gives it (a
     * partition truncated and its manifest line forged to match), as a line naming it; null when none does. Reads
     * nothing but the table: every rank can afford it for every partition before its command starts.
     */
    public String firstOverrun(java.util.List<org.fanstore.prep.format.PartitionInfo> partitions) {
        // one pass over the table keeping each partition's furthest body end (arrays, not a map: it runs over every
        // entry on every rank before the command starts), then one comparison per partition
        int regular = 0;
        int broadcast = 0;
        for (org.fanstore.prep.format.PartitionInfo p : partitions) {
            if (p.broadcast()) {
                broadcast = Math.max(broadcast, p.index() + 1);
            } else {
                regular = Math.max(regular, p.index() + 1);
            }
        }
        long[] regularEnd = new long[regular];
        long[] broadcastEnd = new long[broadcast];
        int n = table.entryCount();
        for (int i = 0; i < n; i++) {
            int p = table.partition(i);
            if (p == NO_BODY) {
                continue;
            }
            long end = table.bodyOffset(i) + table.storedLength(i);
            if (p >= 0 && p < regular) {
                regularEnd[p] = Math.max(regularEnd[p], end);
            } else if (p < 0 && -1 - p < broadcast) {
                broadcastEnd[-1 - p] = Math.max(broadcastEnd[-1 - p], end);
            }
        }
        for (org.fanstore.prep.format.PartitionInfo info : partitions) {
            long end = info.broadcast() ? broadcastEnd[info.index()] : regularEnd[info.index()];
            if (end > info.bytes()) {
                return "partition " + info.fileName() + " has " + info.bytes() + " bytes, but the metadata table"
                        + " places a file's bytes up to byte " + end + " of it: truncated or replaced after prep";
            }
        }
        return null;
    }
}
