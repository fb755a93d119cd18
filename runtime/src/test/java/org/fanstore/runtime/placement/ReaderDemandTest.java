package org.fanstore.runtime.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

/**
 * When the puller counts readers as fetching across the link (its own fetches, or a peer's recent request), and when
 * only peers' readers need this node (a peer's recent request while this node's readers fetch and read nothing).
 */
class ReaderDemandTest {
    private static final long WINDOW = 20_000_000L;
    private static final long IDLE = 200_000_000L;
    private static final long LONG_AGO = 60_000_000_000L;

    @Test
    void ownFetchesCountWhileTheyRun() {
        ReaderDemand d = new ReaderDemand();
        long now = System.nanoTime();
        assertFalse(d.readersFetching(now, WINDOW), "nothing asked yet");
        d.fetchStarted(3);
        assertTrue(d.readersFetching(now, WINDOW));
        d.fetchEnded();
        assertFalse(d.readersFetching(now, WINDOW));
    }

    @Test
    void aPeersRequestCountsForTheWindowOnly() {
        ReaderDemand d = new ReaderDemand();
        d.peerReaderRequest();
        long now = System.nanoTime();
        assertTrue(d.readersFetching(now, WINDOW), "just asked");
        assertTrue(d.readersFetching(now + WINDOW / 2, WINDOW), "still inside the window");
        assertFalse(d.readersFetching(now + WINDOW + 1, WINDOW), "the window passed");
    }

    @Test
    void missedPartitionsComeOutOldestFirstEachOnceWhileQueued() {
        ReaderDemand d = new ReaderDemand();
        for (int i = 0; i < 100_000; i++) {  // nobody polls (--prefetch off): the queue must not grow with the opens
            d.fetchStarted(7);
            d.fetchStarted(2);
            d.fetchEnded();
            d.fetchEnded();
        }
        d.fetchStarted(5);
        d.fetchEnded();
        assertEquals(7, d.nextMissed());
        assertEquals(2, d.nextMissed());
        assertEquals(5, d.nextMissed());
        assertEquals(-1, d.nextMissed(), "each partition once, however often it was missed");
        d.fetchStarted(7);
        d.fetchEnded();
        assertEquals(7, d.nextMissed(), "handed out, then missed again: queued again");
        assertEquals(200_001 + 1, d.remoteFetches());
    }

    @Test
    void onlyPeersReadWhileThisNodesReadersFetchAndReadNothing() {
        AtomicLong readerBytes = new AtomicLong();
        // no PSI and no /proc/stat here: contention never judged, only whether readers read
        ReaderCpu cpu = new ReaderCpu(readerBytes::get, Path.of("/nonexistent/pressure"), Path.of("/nonexistent/stat"));
        ReaderDemand d = new ReaderDemand();
        d.peerReaderRequest();
        long now = System.nanoTime();
        assertFalse(d.onlyPeersRead(now, WINDOW, IDLE), "without a ReaderCpu nothing says this node's readers idle");
        d.attach(cpu);
        assertTrue(d.onlyPeersRead(now, WINDOW, IDLE), "a peer's reader asked; nobody here has read");
        assertFalse(d.onlyPeersRead(now + WINDOW, WINDOW, IDLE), "the peer's request is no longer recent");
        d.fetchStarted(4);
        assertFalse(d.onlyPeersRead(now, WINDOW, IDLE), "a reader of this node fetches across the link");
        d.fetchEnded();

        readerBytes.addAndGet(4096);
        long read = now + ReaderCpu.WINDOW_NANOS;       // the next sample sees this node's readers read
        assertFalse(d.onlyPeersRead(read, LONG_AGO, IDLE), "this node's readers read in the last window");
        assertFalse(d.onlyPeersRead(read + IDLE - 1, LONG_AGO, IDLE), "they read less than the idle span ago");
        assertTrue(d.onlyPeersRead(read + IDLE, LONG_AGO, IDLE), "they read nothing for the idle span");
        readerBytes.addAndGet(4096);
        assertFalse(d.onlyPeersRead(read + IDLE + ReaderCpu.WINDOW_NANOS, LONG_AGO, IDLE), "they read again");
    }

    /** ReaderNotes sends while readers fetch on demand or ride a pull, woken by the listener as either starts. */
    @Test
    void readersAcrossTheLinkCountRidersAndOnDemandFetchesAndWakeTheListener() {
        ReaderDemand d = new ReaderDemand();
        AtomicLong woken = new AtomicLong();
        d.whenFetching(woken::incrementAndGet);
        assertFalse(d.readersAcrossLink());
        d.rideStarted();
        assertTrue(d.readersAcrossLink());
        d.fetchStarted(3);
        d.rideEnded();
        assertTrue(d.readersAcrossLink(), "an on-demand fetch still runs");
        d.fetchEnded();
        assertFalse(d.readersAcrossLink());
        assertEquals(2, woken.get());
    }
}
