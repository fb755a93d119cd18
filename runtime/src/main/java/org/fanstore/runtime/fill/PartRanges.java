package org.fanstore.runtime.fill;

/**
 * The ranges of one partition the node keeps, as {@link FillScheduler} tracks them: each range's state (TODO,
 * IN_FLIGHT, DONE: the scheduler's constants) and its position in the partition's source list. Not thread-safe: the
 * scheduler's, under {@link Fill}'s lock.
 */
final class PartRanges {
    static final byte TODO = 0;
    static final byte IN_FLIGHT = 1;
    static final byte DONE = 2;
    final FillScheduler.Part part;
    final byte[] range;
    final byte[] sourceAt;
    final int rangeBytes;
    int done;
    int nextBackground;
    int notHeld;
    long notBefore;
    boolean abandoned;
    /** Brought in from the home alone (this rank's own or a broadcast partition): stage-in, not prefetch. */
    final boolean stageIn;

    PartRanges(FillScheduler.Part part, int rangeBytes) {
        this.part = part;
        this.rangeBytes = rangeBytes;
        int n = (int) Math.max(1, (part.bytes() + rangeBytes - 1) / rangeBytes);
        this.range = new byte[n];
        this.sourceAt = new byte[n];
        this.stageIn = part.sources().length == 1 && part.sources()[0] == FillScheduler.HOME;
    }

    int rangeOf(long offset) {
        return (int) Math.max(0, Math.min(range.length - 1, offset / rangeBytes));
    }

    int firstTodo(long offset, long length) {
        for (int r = rangeOf(offset), last = rangeOf(offset + Math.max(length, 1) - 1); r <= last; r++) {
            if (range[r] == TODO) {
                return r;
            }
        }
        return -1;
    }

    /** Whether bytes [offset, offset + length) have all landed. */
    boolean covers(long offset, long length) {
        for (int r = rangeOf(offset), last = rangeOf(offset + Math.max(length, 1) - 1); r <= last; r++) {
            if (range[r] != DONE) {
                return false;
            }
        }
        return true;
    }

    /** The first TODO range from the background front; a range that goes back to TODO moves the front back. */
    int nextTodo() {
        while (nextBackground < range.length && range[nextBackground] != TODO) {
            nextBackground++;
        }
        return nextBackground < range.length ? nextBackground : -1;
    }

    /**
     * Range r goes on past {@code source}, if it still points at it: a source marked down while r was in flight from
     * it (every peer after a node loss: liveness/README.md) was skipped already, and moving again would skip the next
     * one (the home) and abandon the partition.
     */
    void past(int r, int source) {
        int[] sources = part.sources();
        if (sourceAt[r] < sources.length && sources[sourceAt[r]] == source) {
            sourceAt[r]++;
        }
    }

    /** "id:done/ranges", "x" appended when given up: the log's view of this partition. */
    String describe() {
        return part.id() + ":" + done + "/" + range.length + (abandoned ? "x" : "");
    }

    /** One long for range r of partition part (the scheduler's set of read-ahead transfers in flight). */
    static long key(int part, int r) {
        return ((long) part << 32) | (r & 0xffffffffL);
    }
}
