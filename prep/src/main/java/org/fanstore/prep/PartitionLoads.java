package org.fanstore.prep;

/**
 * The bytes assigned so far to each of a fixed number of partitions, kept as a binary min-heap of partition
 * indices ordered by (load, index), so the least-loaded partition (ties: the lowest index) is always on top.
 * Primitive arrays only, not a {@code PriorityQueue<Integer>} with a comparator lambda: planning is serial and
 * touches the heap once per file, so boxing and a lambda call per comparison would show in prep's time.
 */
final class PartitionLoads {
    private final long[] load;
    private final int[] heap;

    PartitionLoads(final int partitions) {
        load = new long[partitions];
        heap = new int[partitions];
        // All loads are zero, so indices in increasing order already form a valid heap.
        for (int i = 0; i < partitions; i++) {
            heap[i] = i;
        }
    }

    /** The least-loaded partition (the lowest index among equals). */
    int least() {
        return heap[0];
    }

    /** Adds {@code bytes} to the partition {@link #least()} returns and restores the heap order. */
    void addToLeast(final long bytes) {
        final int top = heap[0];
        load[top] += bytes;
        final int n = heap.length;
        int at = 0;
        while (true) {
            final int left = 2 * at + 1;
            if (left >= n) {
                break;
            }
            final int right = left + 1;
            final int child = right < n && before(heap[right], heap[left]) ? right : left;
            if (!before(heap[child], top)) {
                break;
            }
            heap[at] = heap[child];
            at = child;
        }
        heap[at] = top;
    }

    private boolean before(final int a, final int b) {
        return load[a] != load[b] ? load[a] < load[b] : a < b;
    }
}
