package org.fanstore.runtime.placement;

import java.util.HashMap;
import java.util.Map;

/**
 * Which ranges of a partition being pulled to fetch ahead of its readers ({@link PartitionPuller}). A read whose
 * range is the one the partition's readers read last, or the next one, is in file order; the {@code depth} ranges
 * after it are then due, each named once however many readers come by. A read anywhere else (random order) only
 * moves the mark. Not thread-safe: the puller's lock guards it.
 */
final class ReadAhead {
    private static final int[] NONE = new int[0];

    private final int depth;
    /** Per partition: {the range read last, the last range named ahead}. */
    private final Map<Integer, int[]> marks = new HashMap<>();

    ReadAhead(int depth) {
        this.depth = depth;
    }

    /** A reader reads range {@code range} of partition {@code p} (of {@code ranges}): the ranges now due ahead. */
    int[] read(int p, int range, int ranges) {
        int[] mark = marks.computeIfAbsent(p, k -> new int[] {-2, -1});
        boolean inOrder = range == mark[0] || range == mark[0] + 1;
        mark[0] = range;
        int from = Math.max(mark[1], range) + 1;
        int until = Math.min(ranges - 1, range + depth);
        if (!inOrder || from > until) {
            return NONE;
        }
        int[] due = new int[until - from + 1];
        for (int i = 0; i < due.length; i++) {
            due[i] = from + i;
        }
        mark[1] = until;
        return due;
    }
}
