package org.fanstore.runtime.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** When the puller counts readers as fetching across the link: its own fetches, or a peer's recent request. */
class ReaderDemandTest {
    private static final long WINDOW = 20_000_000L;

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
}
