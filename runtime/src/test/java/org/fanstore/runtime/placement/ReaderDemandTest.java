package org.fanstore.runtime.placement;

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
}
