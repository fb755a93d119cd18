package org.fanstore.runtime.fill;

import java.util.function.ObjLongConsumer;
import org.fanstore.runtime.fill.source.RangeSource;

/**
 * The dataset's home marked down after it stopped answering (README.md, "A silent home"): for {@code downNanos} no
 * transfer starts from it and every reader's read of it is refused at once; then ONE reader's read tries it again
 * (the probe; the others are still refused meanwhile), and the fill's transfers may start again. Any answer ends
 * the outage. Pure, no clock of its own (times on the governor's clock, passed in); not thread-safe: {@link Fill}
 * calls it holding its lock.
 */
public final class HomeOutage {
    /** What a read of the home may do now. */
    enum Admit { GO, PROBE, REFUSE }

    private final long downNanos;
    /** An outage is on: from the first read that got no answer until the next answer. */
    private boolean on;
    private long until;
    private long began;
    private boolean probing;
    private long silentReads;
    private long refusedReads;
    private long outages;
    private long downTotal;

    HomeOutage(long downNanos) {
        this.downNanos = downNanos;
    }

    /** Whether the home is marked down at {@code now}: nothing starts from it. */
    boolean blocks(long now) {
        return on && now - until < 0;
    }

    /** When the mark-down ends (then the driver looks again), or Long.MAX_VALUE. */
    long wakeAt(long now) {
        return blocks(now) ? until : Long.MAX_VALUE;
    }

    /**
     * Whether a read may go: a reader's while the home is up, or as the one probe after the mark-down; a fill
     * transfer's once the mark-down ended (it probes nobody's way: readers do not wait on it).
     */
    Admit admit(long now, boolean reader) {
        if (!on) {
            return Admit.GO;
        }
        if (blocks(now) || reader && probing) {
            refusedReads += reader ? 1 : 0;
            return Admit.REFUSE;
        }
        if (!reader) {
            return Admit.GO;
        }
        probing = true;
        return Admit.PROBE;
    }

    /** A read got no answer within its bound: the home is down until now + the mark-down. True: a new outage. */
    boolean silent(long now) {
        silentReads++;
        probing = false;
        until = now + downNanos;
        if (on) {
            return false;
        }
        on = true;
        began = now;
        outages++;
        return true;
    }

    /** The home answered (bytes, or any answer): the outage ends. Its length in nanoseconds, or -1 if none was on. */
    long answered(long now) {
        if (!on) {
            return -1;
        }
        on = false;
        probing = false;
        downTotal += now - began;
        return now - began;
    }

    /** Reads refused while the home was marked down (readers', each an EIO at once). */
    long refused() {
        return refusedReads;
    }

    /** The statistics' fields (docs/stats.md): present only after an outage. */
    void report(ObjLongConsumer<String> field, long now) {
        if (outages == 0) {
            return;
        }
        field.accept("home_outages", outages);
        field.accept("home_silent_reads", silentReads);
        field.accept("home_refused_reads", refusedReads);
        field.accept("home_down_ms", (downTotal + (on ? now - began : 0)) / 1_000_000);
    }

    /** A read of the home refused or ended because it stopped answering: its line was said once, for the outage. */
    public static final class DownException extends RangeSource.SourceDownException {
        private static final long serialVersionUID = 1L;

        DownException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
