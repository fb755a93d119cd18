package org.fanstore.runtime.placement;

import java.util.HashMap;
import java.util.Map;

/**
 * Which ranges of a partition being pulled to fetch ahead of its readers ({@link PartitionPuller}). A read whose
 * range is the one the partition's readers read last, or the next one, is in file order; the {@code depth} ranges
 * after it are then due, each named once however many readers come by. A read anywhere else (random order) only
 * moves the mark. Not thread-safe: the puller's lock guards it.
 *
 * <p>The marks also order the background pull ({@link #behindReaders}): of the partitions readers read from, the
 * range still to start nearest after where its readers are comes first. A first epoch reads every partition at
 * once (prep deals files out in turn), so the pull then moves along with all of them, just ahead, instead of
 * filling one partition front to back while readers wait for the others; in a dataset of several directories
 * read one at a time it starts where the epoch is, not at the partition's front.
 */
final class ReadAhead {
    private static final int[] NONE = new int[0];
    /**
     * How far after its readers' mark a partition's next range may be for {@link #behindReaders} to pick it (32 MiB
     * of 508 KiB ranges): beyond, the readers are not about to need it, and the search stays a few bytes per
     * partition being pulled however many there are.
     */
    static final int BEHIND_WINDOW = 64;

    private final int depth;
    /** Per partition: {the range read last, the last range named ahead}. */
    private final Map<Integer, int[]> marks = new HashMap<>();

    ReadAhead(int depth) {
        this.depth = depth;
    }

    /**
     * A reader read a large file ending in range {@code range} of partition {@code p}: only the mark moves (large
     * files read nothing ahead, see PartitionPuller#readAhead), so the background order follows it.
     */
    void passed(int p, int range) {
        marks.computeIfAbsent(p, k -> new int[] {-2, -1})[0] = range;
    }

    /**
     * The range the background should pull next, as {partition, range}: of the partitions {@code files} being
     * pulled that readers read, the one whose next range still to start is nearest after its readers' mark (ties:
     * the first in {@code files}); null when readers read none of them or none has a range to start within
     * {@link #BEHIND_WINDOW} after its mark.
     */
    int[] behindReaders(Iterable<PullFile> files) {
        int[] best = null;
        int bestGap = Integer.MAX_VALUE;
        for (PullFile f : files) {
            int[] mark = marks.get(f.info.index());
            if (mark == null || mark[0] < 0) {
                continue;
            }
            int r = f.firstTodoIn(mark[0], mark[0] + Math.min(BEHIND_WINDOW, bestGap));
            if (r >= 0 && r - mark[0] < bestGap) {
                best = new int[] {f.info.index(), r};
                bestGap = r - mark[0];
            }
        }
        return best;
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
