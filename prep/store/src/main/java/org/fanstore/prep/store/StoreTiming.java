package org.fanstore.prep.store;

import java.time.Duration;

/** Every timing and sizing constant of the S3 client, one reason each (README.md: threads and retry loops). */
public final class StoreTiming {
    /** A store that does not accept a TCP connection in this long is down or unreachable (LAN/WAN: ms). */
    public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);
    /** An open response with no byte for this long is a stalled connection: resume the body on a new one. */
    public static final Duration READ_IDLE_TIMEOUT = Duration.ofSeconds(15);
    /** One attempt, up to the response headers (or a whole 16 MiB part upload at 1 MB/s): a slow attempt is retried. */
    public static final Duration ATTEMPT_TIMEOUT = Duration.ofSeconds(30);
    /** One request with all its attempts and backoff waits: past this the store is "not answering". */
    public static final Duration API_CALL_TIMEOUT = Duration.ofSeconds(60);
    /** One ranged read including its body resumes: two full request bounds. */
    public static final Duration READ_TIMEOUT = API_CALL_TIMEOUT.multipliedBy(2);
    /** Attempts per request (first + 7 retries): with the backoff below, ~20 s of waiting at most before the cap. */
    public static final int MAX_ATTEMPTS = 8;
    /** First retry wait (full jitter, doubling): a 5xx or a reset usually clears within a fraction of a second. */
    public static final Duration BACKOFF_BASE = Duration.ofMillis(100);
    /** Longest single wait between attempts: keeps eight attempts inside the per-request bound. */
    public static final Duration BACKOFF_MAX = Duration.ofSeconds(5);
    /** First wait after a 503 SlowDown / throttling code: back off harder than on an error (AWS's advice). */
    public static final Duration THROTTLE_BASE = Duration.ofMillis(500);
    /** Longest wait after throttling. */
    public static final Duration THROTTLE_MAX = Duration.ofSeconds(10);
    /** New GETs of the missing bytes when a body breaks in the middle of a ranged read. */
    public static final int BODY_RESUMES = 4;
    /** Range-GET part: AWS's 8-16 MB advice; Mountpoint's 8 MiB "largest value that achieves max throughput". */
    public static final int READ_PART_BYTES = 8 << 20;
    /** Multipart upload part: 16 MiB keeps a 1 GB partition at 64 parts (S3 allows 10,000, min 5 MiB). */
    public static final int UPLOAD_PART_BYTES = 16 << 20;
    /** Parts in flight per JVM (the pool's threads): 8 range GETs saturated S3Proxy here (object-store.md). */
    public static final int PARALLEL_PARTS = 8;
    /** HTTP connections kept per JVM: the pool's threads plus callers' own single requests. */
    public static final int MAX_CONNECTIONS = 32;
    /** Largest object get() holds in memory (manifest, table, headers): anything bigger is read in ranges. */
    public static final int SMALL_OBJECT_MAX_BYTES = 256 << 20;
    /** Keys per LIST page: S3's maximum, the fewest round trips. */
    public static final int LIST_PAGE_KEYS = 1000;
    /** Copy buffer from a response body to a sink. */
    public static final int COPY_BUFFER_BYTES = 256 << 10;

    private StoreTiming() {
    }
}
