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
     * For each regular partition id in {@code wanted}, the entries with a body in it, in table order (one pass over
     * the table); null for partitions not asked for. Indexed by partition id.
     */
    public int[][] entriesByPartition(int[] wanted) {
        int partitions = java.util.Arrays.stream(wanted).max().orElse(-1) + 1;
        int[][] of = new int[partitions][];
        int[] count = new int[partitions];
        boolean[] asked = new boolean[partitions];
        for (int p : wanted) {
            asked[p] = true;
        }
        int n = table.entryCount();
        for (int i = 0; i < n; i++) {
            int p = table.partition(i);
            if (p >= 0 && p < partitions && asked[p]) {
                count[p]++;
            }
        }
        for (int p = 0; p < partitions; p++) {
            of[p] = asked[p] ? new int[count[p]] : null;
            count[p] = 0;
        }
        for (int i = 0; i < n; i++) {
            int p = table.partition(i);
            if (p >= 0 && p < partitions && asked[p]) {
                of[p][count[p]++] = i;
            }
        }
        return of;
    }
}
