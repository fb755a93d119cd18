package org.fanstore.runtime.stats;

/**
 * Told, on the holder, how long each reader's (whole-object) request took before its first reply message left:
 * with the requester's time to first byte, this splits a remote open's wait into the holder's part and the
 * wire's. Called on fetch worker threads; must not block.
 */
public interface ServeTimes {
    /**
     * @param queuedNanos from the dispatcher's receive of the request until a worker started on it
     * @param firstSentNanos from then until the first reply message (header + first chunk) was sent
     */
    void readerServed(long queuedNanos, long firstSentNanos);
}
