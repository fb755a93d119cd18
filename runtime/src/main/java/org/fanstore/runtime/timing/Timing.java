package org.fanstore.runtime.timing;

import java.time.Duration;

/**
 * Every timing constant of the runtime, in one table: each with the reason for its value in one line. The shim's
 * twin is interpose-native/src/timing.h; TimingOrderTest asserts the orderings that must hold across the two
 * (a bound inside a wait is shorter than the wait around it).
 */
public final class Timing {
    // The shim's wait for an answer (values shared with timing.h: the shim reads them there)
    /** A heartbeat older than this means a dead server if its process is gone or stopped (shm README 4.). */
    public static final long HEARTBEAT_STALE_NS = 3_000_000_000L;
    /** A client gives up on a request after this long: above FETCH_TIMEOUT, so the runtime's own answer wins. */
    public static final long REQUEST_DEADLINE_NS = 30_000_000_000L;
    /** Longest single futex wait, on either side: how late a stop, a wake-up or a stale heartbeat is noticed. */
    public static final long WAIT_SLICE_NS = 100_000_000L;
    // The dispatcher (shm/Dispatcher, ShmServer)
    /** Minimum gap between heartbeat stores: clients read that cache line on every request. */
    public static final long HEARTBEAT_STORE_GAP_NS = 10_000_000L;
    /** Sweep for dead clients this often: a dead client's slot is back well within a request deadline. */
    public static final long SWEEP_INTERVAL_NS = 1_000_000_000L;
    /** A ring head stuck this long behind the tail means a producer died between claim and commit. */
    public static final long UNBLOCK_AFTER_NS = 1_000_000_000L;
    /** Bounded waits during ShmServer.close: many wait slices, the longest the dispatcher sleeps. */
    public static final long CLOSE_JOIN_MILLIS = 2_000;
    // One open or output request, in the runtime
    /** One open's wait in the runtime (cache fill, fetches, commit); OpenService waits half of it on the fill. */
    public static final Duration FETCH_TIMEOUT = Duration.ofSeconds(20);
    /**
     * A dataset home that gave a read no answer within its bound (FETCH_TIMEOUT) is not asked again for this long, then
     * one reader's read tries it (fill/README.md, "A silent home"; docs/decisions/silent-home.md): as long as that
     * bound, so while a store stays silent at most one open worker waits on it, at most half of the time.
     */
    public static final Duration HOME_DOWN = FETCH_TIMEOUT;
    /** How long a peer may stay silent on a fill transfer before the next source serves that range. */
    public static final Duration PEER_STALL = Duration.ofSeconds(3);
    /** A peer's reader request waits this long for bytes being filled: well under PEER_STALL, its stall bound. */
    public static final long READER_WAIT_NANOS = 1_000_000_000L;
    /** How long a pin waits for its reader's open before it is reclaimed (its reader died or stalled). */
    public static final long PIN_GRACE_NANOS = 10_000_000_000L;
    /** How old a pin is before the sweep checks whether its reader released it: about a second of answers kept. */
    public static final long PIN_CHECK_AFTER_NANOS = 1_000_000_000L;
    /** An open waits this long for another thread's decode of its file, sleeping at most the poll between looks. */
    public static final long DECODE_WAIT_NANOS = 30_000_000_000L;
    public static final long DECODE_POLL_NANOS = 50_000_000L;
    /** Between fetches of an output its holder could not serve yet: a commit's broadcast takes about this long. */
    public static final long OUTPUT_RETRY_MS = 5;
    // Peer messages (mpi)
    /** A worker waits this long for one fetch reply to leave: past FETCH_TIMEOUT, only a wedged peer expires. */
    public static final Duration REPLY_TIMEOUT = Duration.ofSeconds(60);
    /** Bounds one commit acknowledgement or reply leaving: 8 bytes sent eagerly, only a wedged peer expires. */
    public static final Duration ACK_TIMEOUT = Duration.ofSeconds(10);
    /** Share of the writer's budget an owner waits for acks: its EIO reaches the writer before the writer quits. */
    public static final double OWNER_SHARE = 0.8;
    /** Longest sleep in BoundedWait before checking a request again: a missed wake-up costs one slice. */
    public static final long BOUNDED_WAIT_SLICE_MILLIS = 5;
    /** How often each rank probes its peers' liveness ports after ready. */
    public static final Duration WATCH_INTERVAL = Duration.ofSeconds(1);
    /** One liveness probe's connect timeout: a dead peer is found within about a watch interval. */
    public static final int PROBE_TIMEOUT_MILLIS = 1_000;
    /** Least time left for gathering the liveness endpoints, even when the join used most of its deadline. */
    public static final Duration ENDPOINTS_GATHER_MIN = Duration.ofSeconds(5);
    /** A peer service's threads get this long to stop at close: they are idle by then (after the final barrier). */
    public static final Duration SERVICE_CLOSE = Duration.ofSeconds(5);
    // Joining the job (rendezvous)
    /** How long a connection may take to say HELLO and prove itself; a rank has both ready when it connects. */
    public static final long HANDSHAKE_MILLIS = 10_000;
    /** Longest select: how late a handshake deadline or the job deadline can be noticed. */
    public static final long TICK_MILLIS = 100;
    /** The rendezvous thread's report may come this long after the job deadline: many ticks. */
    public static final long COMPLETION_SLACK_NANOS = 2_000_000_000L;
    /** Pauses between looks for the rendezvous file, doubling from the first: a late server costs half a second. */
    public static final long FIRST_POLL_NANOS = 20_000_000L;
    public static final long MAX_POLL_NANOS = 500_000_000L;
    /** How long one step with our own processes may take before we look again at the deadline and at MPJ. */
    public static final int STEP_MILLIS = 100;
    /** Pause before connecting again after the rendezvous shed an unproven connection. */
    public static final long RETRY_MILLIS = 50;
    /** Pause between looks for MPJ's client socket during init: it appears within milliseconds. */
    public static final long SOCKET_POLL_MILLIS = 5;
    // The job's phases (NodeRuntime)
    /** Joining the world: every rank of a job starts within this of the others. */
    public static final Duration INIT_TIMEOUT = Duration.ofMinutes(2);
    /** One collective of the load (table broadcast, barriers): rank 0 may read a large table meanwhile. */
    public static final Duration COLLECTIVE_TIMEOUT = Duration.ofMinutes(10);
    /** The final barrier: other ranks' commands may run that long; a dead rank fails it in about a second. */
    public static final Duration FINISH_TIMEOUT = Duration.ofHours(48);
    /** Copying outputs to --output-dir after the last command ended; what is not copied by then fails the job. */
    public static final Duration DRAIN_TIMEOUT = Duration.ofMinutes(30);
    /** The statistics all-gather right after the final barrier: every rank is there, a dead one fails it at once. */
    public static final Duration STATS_TIMEOUT = Duration.ofSeconds(10);
    // A rank's directories (lifecycle)
    /** How long (looking each poll) the commands get to end on SIGTERM: the launcher is gone, this is a crash. */
    public static final long COMMAND_GRACE_MILLIS = 2_000;
    public static final long COMMAND_POLL_MILLIS = 20;
    /** How long orphan cleanup waits for a rank's lock before leaving the directories to its holder. */
    public static final long LOCK_WAIT_MILLIS = 3_000;
    /** Pause before trying a rank lock again: short when no holder is named (a race), longer while one holds it. */
    public static final long LOCK_RETRY_FREE_MILLIS = 1;
    public static final long LOCK_RETRY_HELD_MILLIS = 50;

    private Timing() {
    }

    // fill (runtime/fill): the fill's waits are bounds, not heuristics (fill/README.md, "Constants")

    /** A peer's background "not held" is asked again after this: far below a range's transfer, few round trips. */
    public static final long FILL_NOT_HELD_RETRY_NANOS = 50_000_000L;
    /** Background "not held" answers per partition before its next source serves: 100 x 50 ms, 5 s of a peer. */
    public static final int FILL_NOT_HELD_RETRIES = 100;
    /** The fill driver looks again at least this often with nothing to do: a missed notify costs at most this. */
    public static final long FILL_DRIVER_IDLE_MILLIS = 1000;
    /** A wait for whole partitions looks again at least this often: start-up waits run for seconds. */
    public static final long FILL_COMPLETE_POLL_MILLIS = 100;
    /** Closing waits this long for the driver: it wakes on the stop within one look (notified, or the idle bound). */
    public static final Duration FILL_DRIVER_JOIN = Duration.ofSeconds(2);
    /** Closing waits this long for each pool: a transfer in flight is bounded by its source's stall deadline. */
    public static final Duration FILL_POOL_DRAIN = Duration.ofSeconds(10);
}
