package org.fanstore.runtime.timing;

import static org.fanstore.runtime.timing.Timing.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The orderings between the timing constants of the runtime ({@link Timing}) and of the shim (timing.h) that the
 * code relies on and nothing else checks: a bound inside a wait must be shorter than the wait around it, and a
 * value both sides use must be the same on both. Each message says why the ordering must hold.
 */
class TimingOrderTest {
    /** The shim's timing constants: timing.h, or before it existed the files that held them (both are read). */
    private static final List<String> C_FILES = List.of("timing.h", "wire_layout.h", "wire_client.c");
    private static final Pattern DEFINE = Pattern.compile("(?m)^#define\\s+FS_(\\w+_NS)\\s+(\\d+)L*\\b");
    private static final long MS = 1_000_000L;

    private static Map<String, Long> c;

    @BeforeAll
    static void readShim() throws IOException {
        Path src = Path.of(System.getProperty("basedir", "")).toAbsolutePath().resolveSibling("interpose-native")
                .resolve("src");
        c = new HashMap<>();
        for (String name : C_FILES) {
            Path file = src.resolve(name);
            if (!Files.exists(file)) {
                continue;
            }
            Matcher m = DEFINE.matcher(Files.readString(file));
            while (m.find()) {
                Long before = c.put(m.group(1), Long.parseLong(m.group(2)));
                assertTrue(before == null || before == Long.parseLong(m.group(2)),
                        "FS_" + m.group(1) + " is defined twice in " + src + " with different values");
            }
        }
        assertFalse(c.isEmpty(), "no #define FS_*_NS found in " + src + " " + C_FILES);
    }

    private static long shim(String name) {
        Long v = c.get(name);
        assertTrue(v != null, "FS_" + name + " not found in interpose-native/src " + C_FILES);
        return v;
    }

    @Test
    void theValuesBothSidesUseAreTheSame() {
        assertEquals(shim("HEARTBEAT_STALE_NS"), HEARTBEAT_STALE_NS,
                "the stale threshold is one protocol value: the README and the runtime's tests state the shim's");
        assertEquals(shim("REQUEST_DEADLINE_NS"), REQUEST_DEADLINE_NS,
                "the request deadline is one protocol value: the runtime's latency accounting drops answers past it");
        assertEquals(shim("WAIT_SLICE_NS"), WAIT_SLICE_NS,
                "the longest futex wait is one value on either side of the wire (shm README)");
    }

    @Test
    void theShimsWaitsNestInsideEachOther() {
        assertTrue(shim("BUSY_RETRY_NS") < shim("WAIT_SLICE_NS"),
                "a retry on a full ring or slot table is a short pause, not a futex wait");
        assertTrue(shim("WAIT_SLICE_NS") * 10 <= shim("HEARTBEAT_STALE_NS"),
                "a client looks at the heartbeat between wait slices: many looks before it can call it stale");
        assertTrue(shim("HEARTBEAT_STALE_NS") * 2 <= shim("REQUEST_DEADLINE_NS"),
                "a dead server must be found by its heartbeat well before the request's own deadline");
    }

    @Test
    void aLiveDispatchersHeartbeatNeverLooksStale() {
        assertTrue(HEARTBEAT_STORE_GAP_NS <= WAIT_SLICE_NS,
                "an idle dispatcher wakes once per wait slice: each wake-up must store the heartbeat");
        assertTrue((HEARTBEAT_STORE_GAP_NS + WAIT_SLICE_NS) * 10 <= shim("HEARTBEAT_STALE_NS"),
                "a live dispatcher's heartbeat is at most a store gap plus a wait slice old: far under stale");
        assertTrue(CLOSE_JOIN_MILLIS * MS > WAIT_SLICE_NS,
                "ShmServer.close waits for the dispatcher, which may be asleep for a whole wait slice");
    }

    @Test
    void deadClientsAreCleanedUpWithinALiveClientsDeadline() {
        assertTrue(SWEEP_INTERVAL_NS * 10 <= shim("REQUEST_DEADLINE_NS"),
                "a dead client's slot must be swept long before the clients waiting for one give up");
        assertTrue(UNBLOCK_AFTER_NS * 10 <= shim("REQUEST_DEADLINE_NS"),
                "a ring blocked by a producer that died mid-record must be unblocked long before its other"
                        + " producers (retrying on a full ring) give up");
    }

    @Test
    void theRuntimeAnswersBeforeTheShimGivesUp() {
        assertTrue(FETCH_TIMEOUT.toNanos() < shim("REQUEST_DEADLINE_NS"),
                "a reader's wait must end in the runtime (with its own error) before the shim gives up on the"
                        + " request and answers EIO without a reason");
        assertTrue(DECODE_WAIT_NANOS <= shim("REQUEST_DEADLINE_NS"),
                "an open waiting on another thread's decode must not outwait the shim's deadline (today equal)");
        assertTrue(OWNER_SHARE > 0 && OWNER_SHARE < 1,
                "a commit's owner must give up on acknowledgements before the writer gives up on the owner");
        assertTrue(OUTPUT_RETRY_MS * MS * 100 <= FETCH_TIMEOUT.toNanos(),
                "an output not servable yet is fetched again many times within the request's wait");
    }

    @Test
    void aStalledSourceLeavesTheOpenTimeForTheNext() {
        assertTrue(PEER_STALL.multipliedBy(2).compareTo(FETCH_TIMEOUT.dividedBy(2)) <= 0,
                "an open waits on the fill for half the fetch timeout, then reads from the sources: the other"
                        + " half must outlast a stalled peer and still serve from the next source");
        assertTrue(READER_WAIT_NANOS < PEER_STALL.toNanos(),
                "a peer's reader request waiting on our fill must be answered before the requester calls us"
                        + " stalled and moves on");
        assertTrue(REPLY_TIMEOUT.compareTo(FETCH_TIMEOUT) > 0,
                "a server drops a fetch reply only after its requester has given up on it");
        assertTrue(PIN_CHECK_AFTER_NANOS < PIN_GRACE_NANOS,
                "a pin is looked at before its grace is up, so released pins are forgotten, not expired");
    }

    @Test
    void joiningNoticesItsDeadlinesInTime() {
        assertTrue(TICK_MILLIS * 10 <= COMPLETION_SLACK_NANOS / MS,
                "the rendezvous notices the job deadline within a tick: the wait for its report allows many");
        assertTrue(TICK_MILLIS * 10 <= HANDSHAKE_MILLIS,
                "a handshake deadline is noticed within a tick: many ticks per handshake");
        assertTrue(HANDSHAKE_MILLIS * MS * 2 <= INIT_TIMEOUT.toNanos(),
                "an unproven connection is dropped well within the join, so a rank that retries still joins");
        assertTrue(FIRST_POLL_NANOS < MAX_POLL_NANOS,
                "the pause between looks for the rendezvous file doubles from the first up to the longest");
    }

    @Test
    void aDeadPeerIsFoundBeforeTheStatsGatherGivesUp() {
        assertTrue(WATCH_INTERVAL.toMillis() + PROBE_TIMEOUT_MILLIS < STATS_TIMEOUT.toMillis(),
                "the stats all-gather relies on the liveness watch, not its timeout, to name a dead peer");
    }
}
