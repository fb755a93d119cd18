package org.fanstore.runtime.fill;

import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.fanstore.prep.format.PartitionInfo;

/**
 * The local file a kept partition is filled into, {@code .fill-<name>} beside the complete copies, until it is
 * complete, checked and renamed. Which ranges landed is the scheduler's; this holds the file, the CRCs of what
 * landed ({@link LandedCrcs}) and what slices were handed out from it. Fields marked so are guarded by
 * {@link Fill}'s lock.
 */
final class FillFile {
    final PartitionInfo info;
    final int id;
    final Path tmp;
    final FileChannel channel;
    /** The entries with a body in this partition. */
    final int[] entries;
    final LandedCrcs crcs;
    /** Some entry is published as a slice of {@link #tmp} (guarded): that name must stay for the job. */
    boolean sliced;
    /** Given up, or being published under its final name (guarded): no new slice of {@link #tmp}. */
    boolean closed;
    /** {offset, length} of the bytes slices of {@link #tmp} were handed out for (guarded). */
    private final List<long[]> kept = new ArrayList<>();

    FillFile(PartitionInfo info, int id, Path tmp, FileChannel channel, int[] entries, LandedCrcs crcs) {
        this.info = info;
        this.id = id;
        this.tmp = tmp;
        this.channel = channel;
        this.entries = entries;
        this.crcs = crcs;
    }

    /** Bytes [offset, offset + length) are read in place by a slice of {@link #tmp}: they stay if it is abandoned. */
    void keep(long offset, long length) {
        kept.add(new long[] {offset, length});
    }

    /**
     * The {offset, length} ranges no slice reads, in whole {@code page}s (a kept range keeps every page it touches),
     * in file order: what can be punched out of an abandoned file.
     */
    List<long[]> unkeptPages(long page) {
        List<long[]> sorted = new ArrayList<>(kept);
        sorted.sort(Comparator.comparingLong(r -> r[0]));
        long end = (info.bytes() + page - 1) / page * page;
        List<long[]> holes = new ArrayList<>();
        long from = 0;
        for (long[] r : sorted) {
            long start = r[0] / page * page;
            if (start > from) {
                holes.add(new long[] {from, start - from});
            }
            from = Math.max(from, (r[0] + r[1] + page - 1) / page * page);
        }
        if (end > from) {
            holes.add(new long[] {from, end - from});
        }
        return holes;
    }
}
