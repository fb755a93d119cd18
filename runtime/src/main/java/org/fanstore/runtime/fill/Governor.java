package org.fanstore.runtime.fill;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The bounds {@link FillScheduler} keeps its classes of transfer under (README.md, "The scheduler": background,
 * readers', read-ahead's), and the count of its decisions for --stats; the order itself is the scheduler's alone. No
 * signal beyond the counts the scheduler passes in: docs/decisions/fill-governor.md says which were tried.
 */
public final class Governor {
    /**
     * @param backgroundInFlight background transfers at most in flight: stage-in and pulls, from every source
     *                           without a bound of its own (RangeSource#backgroundInFlight)
     * @param foregroundInFlight transfers readers wait for at most in flight (a reader's run counts once)
     * @param aheadInFlight read-ahead transfers at most in flight: a bound of their own, never a reader's slot
     */
    public record Config(int backgroundInFlight, int foregroundInFlight, int aheadInFlight) {
        /** Read-ahead transfers in flight by default: as many as an in-order reader has ranges named ahead. */
        public static final int AHEAD_IN_FLIGHT = 4;
        /** The defaults: two background ranges keep a link or a shared FS busy; readers never wait behind more. */
        public static final Config DEFAULT = new Config(2, 8, AHEAD_IN_FLIGHT);

        /** Background and readers' bounds, read-ahead's the default. */
        public Config(int backgroundInFlight, int foregroundInFlight) {
            this(backgroundInFlight, foregroundInFlight, AHEAD_IN_FLIGHT);
        }

        /**
         * {@link #DEFAULT}, or what {@code -Dfanstore.fill.background=N} and {@code -Dfanstore.fill.foreground=N}
         * (FANSTORE_RUNTIME_JAVA_OPTS) say: for the A/Bs in docs/decisions/fill-governor.md, not a user knob.
         */
        public static Config fromProperties() {
            return new Config(Integer.getInteger("fanstore.fill.background", DEFAULT.backgroundInFlight()),
                    Integer.getInteger("fanstore.fill.foreground", DEFAULT.foregroundInFlight()),
                    DEFAULT.aheadInFlight());
        }

        public Config {
            if (backgroundInFlight < 0 || foregroundInFlight < 1 || aheadInFlight < 0) {
                throw new IllegalArgumentException("in-flight bounds must be >= 0 and >= 1");
            }
        }
    }

    private final Config config;
    private final LongSupplier clock;
    private final AtomicLong backgroundStarts = new AtomicLong();
    private final AtomicLong backgroundHeld = new AtomicLong();
    private final AtomicLong foregroundStarts = new AtomicLong();
    private final AtomicLong foregroundHeld = new AtomicLong();

    public Governor(Config config, LongSupplier clock) {
        this.config = config;
        this.clock = clock;
    }

    public Config config() {
        return config;
    }

    public long now() {
        return clock.getAsLong();
    }

    /**
     * Whether a background transfer from a source with {@code inFlight} of its class already running may start:
     * {@code ownBound} > 0 is that source's own bound (a latency-bound home: README.md, "Transfers by source"),
     * else the shared {@link Config#backgroundInFlight}. Not counted: {@link #countBackground} counts the answer.
     */
    boolean backgroundRoom(int inFlight, int ownBound) {
        return inFlight < (ownBound > 0 ? ownBound : config.backgroundInFlight());
    }

    /** Counts one background decision of the scheduler: a start, or held back because every class was full. */
    void countBackground(boolean started) {
        (started ? backgroundStarts : backgroundHeld).incrementAndGet();
    }

    /** Whether a transfer a reader waits for may start with {@code inFlight} such transfers running. */
    boolean mayStartForeground(int inFlight) {
        if (inFlight < config.foregroundInFlight()) {
            foregroundStarts.incrementAndGet();
            return true;
        }
        foregroundHeld.incrementAndGet();
        return false;
    }

    public long backgroundStarts() {
        return backgroundStarts.get();
    }

    /** Times a background transfer waited because its bound's worth were running. */
    public long backgroundHeld() {
        return backgroundHeld.get();
    }

    public long foregroundStarts() {
        return foregroundStarts.get();
    }

    public long foregroundHeld() {
        return foregroundHeld.get();
    }
}
