package org.fanstore.runtime.stats;

import java.util.Locale;

/** How the runtime answered an open: the kinds the statistics count and time separately. */
public enum OpenKind {
    /** A local file read from this rank's partition copy: an uncompressed file unpacked on demand, or a file of
     *  a pulled partition copied into the cache. */
    LOCAL,
    /** Already in the cache (or materialised meanwhile by another request for the same file). */
    CACHE_HIT,
    /** Decompressed from this rank's partition copy into the cache. */
    DECOMPRESSED,
    /** Fetched from the rank holding it into the cache (and decompressed if stored compressed). */
    REMOTE,
    /** A file opened for writing (the output path sets it; see {@link OpenTimer#kind}). */
    OUTPUT;

    /** The name in stats lines and JSON: lower case. */
    public String key() {
        return name().toLowerCase(Locale.ROOT);
    }
}
