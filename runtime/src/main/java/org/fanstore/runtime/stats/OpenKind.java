package org.fanstore.runtime.stats;

import java.util.Locale;

/** How the runtime answered an open: the kinds the statistics count and time separately. */
public enum OpenKind {
    /** A local file read from a partition copy this rank keeps: an uncompressed file checked or unpacked on
     *  demand, or copied into the cache. */
    LOCAL,
    /** Already in the cache (or materialised meanwhile by another request for the same file). */
    CACHE_HIT,
    /** Decompressed from this rank's partition copy into the cache. */
    DECOMPRESSED,
    /** Read from a source into the cache (a peer that keeps it, or the shared FS; also a file of a kept partition
     *  still filling), and decompressed if stored compressed. */
    REMOTE,
    /** A read of another node's committed output, fetched from its holder (see {@link OpenTimer#kind}). */
    OUTPUT;

    /** The name in stats lines and JSON: lower case. */
    public String key() {
        return name().toLowerCase(Locale.ROOT);
    }
}
