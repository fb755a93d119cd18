package org.fanstore.runtime.stats;

import java.util.Locale;

/**
 * Where the time of one remote (materialising) open goes, stage by stage in the order they happen; the stages do
 * not overlap except {@link #CACHE_WRITE}, which is the part of {@link #FETCH_REST} spent writing into the cache
 * file. The shim's wake-up after {@link #REPLY} is not a stage: the runtime learns it only as a sum over all
 * its answers (shim.counters, {@code shim_wake_ns}), not per open.
 */
public enum RemoteStage {
    /** The shim's submit stamp in the slot until the dispatcher took the request off the ring (both
     *  CLOCK_MONOTONIC): the doorbell wake-up of an idle dispatcher, or the requests ahead of it. */
    RING_WAIT,
    /** The dispatcher's first look at the request until an open worker thread starts on it. */
    QUEUE,
    /** Asking the cache for room and creating the temporary cache file, until the first byte may be written. */
    CACHE_SETUP,
    /** The fetch request leaving until the owner's first reply message arrived (one MPJ round trip plus the
     *  owner's own queueing and read). */
    FETCH_FIRST_BYTE,
    /** First message to last byte written: the remaining chunks, the CRC and the writes into the cache file. */
    FETCH_REST,
    /** Inside {@link #FETCH_REST}: time spent in write calls on the cache file (tmpfs). */
    CACHE_WRITE,
    /** Body complete until the file is visible under its final name (close, chmod, rename, bookkeeping). */
    COMMIT,
    /** Writing the answer into the shim's slot and waking it. */
    REPLY;

    /** The name in stats lines ({@code stage_<key>}) and JSON: lower case. */
    public String key() {
        return name().toLowerCase(Locale.ROOT);
    }
}
