package org.fanstore.runtime.timing;

import java.time.Duration;

/**
 * Every timing constant of the runtime, in one table: each with the reason for its value in one line. The shim's
 * twin is interpose-native/src/timing.h; TimingOrderTest asserts the orderings that must hold across the two
 * (a bound inside a wait is shorter than the wait around it).
 */
public final class Timing {
    private Timing() {
    }

    // fill (runtime/fill): the fill's waits are bounds, not heuristics (fill/README.md, "Constants")

    /** A peer's background "not held" is asked again after this: far below a range's transfer, few round trips. */
    public static final long FILL_NOT_HELD_RETRY_NANOS = 50_000_000L;
    /** Background "not held" answers per partition before its next source serves: 100 x 50 ms, 5 s of a peer. */
    public static final int FILL_NOT_HELD_RETRIES = 100;
    /** The fill driver looks again at least this often with nothing to do: a missed notify costs at most this. */
    public static final long FILL_DRIVER_IDLE_MILLIS = 1000;
    /** A reader waiting for its ranges looks again at least this often: a missed notify costs a reader little. */
    public static final long FILL_READER_POLL_MILLIS = 20;
    /** A wait for whole partitions looks again at least this often: start-up waits run for seconds. */
    public static final long FILL_COMPLETE_POLL_MILLIS = 100;
    /** Closing waits this long for the driver: it wakes on the stop within one look (notified, or the idle bound). */
    public static final Duration FILL_DRIVER_JOIN = Duration.ofSeconds(2);
    /** Closing waits this long for each pool: a transfer in flight is bounded by its source's stall deadline. */
    public static final Duration FILL_POOL_DRAIN = Duration.ofSeconds(10);
}
