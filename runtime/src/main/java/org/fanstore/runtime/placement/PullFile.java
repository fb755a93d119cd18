package org.fanstore.runtime.placement;

import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.fanstore.prep.format.PartitionInfo;

/**
 * One partition being pulled: its temporary file and which of its ranges have landed. Guarded by the
 * {@link PartitionPuller}'s lock (every method is called holding it), because readers wait on the same lock for
 * the ranges their file needs, and a range landing must wake them and the puller's scheduler at once.
 *
 * <p>A range is DONE only after its every byte was written at its place, so bytes inside DONE ranges can be read
 * by anyone holding {@link #channel}; readers still check each body's CRC32C, and the whole file is checked
 * against the manifest before it becomes a local partition.
 */
final class PullFile {
    private static final byte TODO = 0;
    private static final byte IN_FLIGHT = 1;
    private static final byte DONE = 2;

    final PartitionInfo info;
    final Path tmp;
    final FileChannel channel;
    /** The entries with a body in this partition, and the CRCs of the bytes landed so far. */
    final int[] entries;
    final LandedCrcs crcs;
    private final byte[] state;
    private final int rangeBytes;
    private int done;
    private int nextBackground;
    /** Some entry is published as a slice of {@link #tmp} (guarded by the puller's lock): the name must stay. */
    boolean sliced;
    /** Given up, or being published under its final name (guarded by the puller's lock): no new slice of it. */
    boolean abandoned;
    /** {offset, length} of the bytes slices of {@link #tmp} were handed out for: all that must stay if abandoned. */
    private final List<long[]> kept = new ArrayList<>();

    PullFile(PartitionInfo info, Path tmp, FileChannel channel, int rangeBytes) {
        this(info, tmp, channel, rangeBytes, new int[0], new LandedCrcs(info.bytes(), rangeBytes, new long[0],
                new long[0]));
    }

    PullFile(PartitionInfo info, Path tmp, FileChannel channel, int rangeBytes, int[] entries, LandedCrcs crcs) {
        this.info = info;
        this.tmp = tmp;
        this.channel = channel;
        this.rangeBytes = rangeBytes;
        this.entries = entries;
        this.crcs = crcs;
        this.state = new byte[(int) Math.max(1, (info.bytes() + rangeBytes - 1) / rangeBytes)];
    }

    int ranges() {
        return state.length;
    }

    long position(int range) {
        return (long) range * rangeBytes;
    }

    long length(int range) {
        return Math.min(rangeBytes, info.bytes() - position(range));
    }

    int rangeOf(long offset) {
        return (int) Math.min(state.length - 1, offset / rangeBytes);
    }

    /** The first range holding bytes [offset, offset + length) that is still to start, or -1. */
    int firstTodo(long offset, long length) {
        for (int r = rangeOf(offset), last = lastRange(offset, length); r <= last; r++) {
            if (state[r] == TODO) {
                return r;
            }
        }
        return -1;
    }

    private int lastRange(long offset, long length) {
        return rangeOf(offset + Math.max(length, 1) - 1);
    }

    /** The first range in [from, until) that is still to start, or -1. */
    int firstTodoIn(int from, int until) {
        for (int r = Math.max(0, from); r < Math.min(until, state.length); r++) {
            if (state[r] == TODO) {
                return r;
            }
        }
        return -1;
    }

    /** Whether range {@code range} is still to start. */
    boolean todo(int range) {
        return state[range] == TODO;
    }

    void started(int range) {
        state[range] = IN_FLIGHT;
    }

    void landed(int range) {
        state[range] = DONE;
        done++;
    }

    boolean complete() {
        return done == state.length;
    }

    /** Whether bytes [offset, offset + length) are all in DONE ranges. */
    boolean covers(long offset, long length) {
        for (int r = rangeOf(offset), last = lastRange(offset, length); r <= last; r++) {
            if (state[r] != DONE) {
                return false;
            }
        }
        return true;
    }

    /** Bytes [offset, offset + length) are read in place by a slice of {@link #tmp}: they stay if it is abandoned. */
    void keep(long offset, long length) {
        kept.add(new long[] {offset, length});
    }

    /**
     * The {offset, length} ranges of an abandoned pull file that no slice reads, in whole {@code page}s (a kept
     * range keeps every page it touches), in file order: what can be punched out of it.
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

    /** The next range still to start in file order, or -1: the background pull goes front to back. */
    int nextTodo() {
        while (nextBackground < state.length && state[nextBackground] != TODO) {
            nextBackground++;
        }
        return nextBackground < state.length ? nextBackground : -1;
    }
}
