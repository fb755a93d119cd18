package org.fanstore.runtime.placement;

/**
 * Where each table entry's body lies, indexed by metadata-table entry index: columns of primitives rather
 * than an object per entry, because a namespace holds millions of entries and the runtime keeps this for its
 * whole life. Directories and entries without a body have partition {@link #NO_BODY}.
 */
public final class BodyIndex {
    public static final int NO_BODY = Integer.MIN_VALUE;

    private final int[] partition;
    private final long[] bodyOffset;
    private final long[] storedLength;
    private final byte[] codec;
    private final int[] crc32c;

    public BodyIndex(int entries) {
        partition = new int[entries];
        java.util.Arrays.fill(partition, NO_BODY);
        bodyOffset = new long[entries];
        storedLength = new long[entries];
        codec = new byte[entries];
        crc32c = new int[entries];
    }

    public void set(int index, IndexRecord r) {
        partition[index] = r.partition();
        bodyOffset[index] = r.entry().bodyOffset();
        storedLength[index] = r.entry().storedLength();
        codec[index] = (byte) r.entry().codec();
        crc32c[index] = r.entry().crc32c();
    }

    public int entries() {
        return partition.length;
    }

    /** Regular partition index, {@code -1 - i} for broadcast partition i, or {@link #NO_BODY}. */
    public int partition(int index) {
        return partition[index];
    }

    public long bodyOffset(int index) {
        return bodyOffset[index];
    }

    public long storedLength(int index) {
        return storedLength[index];
    }

    public int codec(int index) {
        return codec[index];
    }

    public int crc32c(int index) {
        return crc32c[index];
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
        for (int p : partition) {
            if (p >= 0 && p < partitions && asked[p]) {
                count[p]++;
            }
        }
        for (int p = 0; p < partitions; p++) {
            of[p] = asked[p] ? new int[count[p]] : null;
            count[p] = 0;
        }
        for (int i = 0; i < partition.length; i++) {
            int p = partition[i];
            if (p >= 0 && p < partitions && asked[p]) {
                of[p][count[p]++] = i;
            }
        }
        return of;
    }
}
