package org.fanstore.prep.store;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CreateBucketRequest;
import software.amazon.awssdk.services.s3.model.DeleteObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * The S3 client of fanstore (README.md): one per JVM, thread-safe. Single requests run on the caller's thread;
 * the parts of large reads and uploads on the {@code fanstore-s3-N} pool. Every failure is a {@link StoreException}
 * whose message is one line.
 */
public final class ObjectStore implements AutoCloseable {
    /**
     * How to reach the store. {@code endpoint} null: AWS S3. {@code accessKey} null: the SDK's default credentials
     * chain. {@code region} null: the default region chain, else us-east-1.
     */
    public record Settings(URI endpoint, String region, String accessKey, String secretKey, Duration apiCallTimeout,
            Duration attemptTimeout, Duration readIdleTimeout, int maxAttempts) {
        /** Explicit endpoint and keys (tests, tools), the default timing. */
        public static Settings of(URI endpoint, String accessKey, String secretKey) {
            return new Settings(endpoint, "us-east-1", accessKey, secretKey, StoreTiming.API_CALL_TIMEOUT,
                    StoreTiming.ATTEMPT_TIMEOUT, StoreTiming.READ_IDLE_TIMEOUT, StoreTiming.MAX_ATTEMPTS);
        }

        /** The same with other bounds (tests that wait for a bound). */
        public Settings withBounds(Duration apiCall, Duration attempt, Duration readIdle, int attempts) {
            return new Settings(endpoint, region, accessKey, secretKey, apiCall, attempt, readIdle, attempts);
        }
    }

    /** One listed object. */
    public record ObjectInfo(String key, long size) {
    }

    /** One object of a delimiter listing, with its last-modified time. */
    public record Listed(String key, long size, java.time.Instant lastModified) {
    }

    /** One level of a delimiter ('/') listing: the objects directly under the prefix and the prefixes below it. */
    public record Level(List<Listed> objects, List<String> prefixes) {
    }

    /** What a HEAD says: the size and the user metadata (names lower case, without "x-amz-meta-"). */
    public record Head(long size, java.util.Map<String, String> metadata) {
    }

    /** A read with no deadline of its caller's: the client's own bounds (StoreTiming) only. */
    public static final long NO_DEADLINE = StoreDeadlines.NONE;

    private final S3Client s3;
    private final String endpointName;
    private final StoreCounters counters = new StoreCounters();
    private final ExecutorService pool;
    private final StoreErrors errors;
    private final StoreTransfers transfers;
    private final StoreDeadlines deadlines = new StoreDeadlines();
    private final Settings settings;

    private ObjectStore(Settings settings, AwsCredentialsProvider credentials) {
        this.settings = settings;
        this.endpointName = settings.endpoint() == null ? "AWS S3" : settings.endpoint().toString();
        this.s3 = StoreClients.s3(settings, credentials, counters, deadlines.timer());
        this.pool = StoreClients.pool();
        this.errors = new StoreErrors(s3, endpointName, settings);
        this.transfers = new StoreTransfers(this, s3, pool, counters, errors);
    }

    /**
     * The store as the AWS conventions name it: endpoint from {@code AWS_ENDPOINT_URL_S3} or {@code AWS_ENDPOINT_URL}
     * (path-style), credentials from the SDK's default chain (resolved now: "no credentials" before any work).
     */
    public static ObjectStore fromEnvironment() throws StoreException {
        return connect(StoreClients.fromEnvironment());
    }

    /** A store with explicit settings; null keys: the default credentials chain, resolved now. */
    public static ObjectStore connect(Settings settings) throws StoreException {
        return new ObjectStore(settings, StoreClients.credentials(settings));
    }

    /** The endpoint as messages name it. */
    public String endpoint() {
        return endpointName;
    }

    public StoreCounters counters() {
        return counters;
    }

    /** The object's size (HEAD). */
    public long size(String bucket, String key) throws StoreException {
        try {
            return s3.headObject(HeadObjectRequest.builder().bucket(bucket).key(key).build()).contentLength();
        } catch (SdkException e) {
            throw errors.refineHead(e, "HEAD", bucket, key);
        }
    }

    /** The object's size and user metadata (HEAD), or empty when there is no such key (the bucket exists). */
    public java.util.Optional<Head> head(String bucket, String key) throws StoreException {
        try {
            var r = s3.headObject(HeadObjectRequest.builder().bucket(bucket).key(key).build());
            return java.util.Optional.of(new Head(r.contentLength(), r.metadata()));
        } catch (SdkException e) {
            StoreException line = errors.refineHead(e, "HEAD", bucket, key);
            if (line.reason() == StoreException.Reason.NO_KEY) {
                return java.util.Optional.empty();
            }
            throw line;
        }
    }

    /** An object's first bytes and its whole size, from one ranged GET's Content-Range ({@link #readFirst}). */
    public record First(long size, byte[] bytes) {
    }

    /**
     * The object's first {@code n} bytes (fewer if it is shorter) and its size, in one ranged GET: a HEAD and a read
     * for the price of one round trip. An empty object is refused by the store (416): ask {@link #size} then.
     */
    public First readFirst(String bucket, String key, int n) throws IOException {
        ResponseInputStream<GetObjectResponse> in;
        try {
            in = s3.getObject(GetObjectRequest.builder().bucket(bucket).key(key).range("bytes=0-" + (n - 1)).build());
        } catch (SdkException e) {
            throw map(e, "GET", bucket, key);
        }
        try (in) {
            byte[] bytes = in.readNBytes(n);
            counters.bytesIn(bytes.length);
            long size = totalOf(in.response().contentRange());
            return new First(size >= 0 ? size : size(bucket, key), bytes);   // not said: a HEAD
        } catch (StoreException e) {
            throw e;
        } catch (IOException e) {
            throw new StoreException(StoreException.Reason.NOT_ANSWERING, "the object store at " + endpointName
                    + " broke off reading " + StoreErrors.url(bucket, key) + " (" + StoreErrors.describe(e)
                    + "): check that the store is up and reachable");
        }
    }

    /** A whole small object (a manifest, a table) in memory; at most {@link StoreTiming#SMALL_OBJECT_MAX_BYTES}. */
    public byte[] get(String bucket, String key) throws IOException {
        long size = size(bucket, key);
        if (size > StoreTiming.SMALL_OBJECT_MAX_BYTES) {
            throw new StoreException(StoreException.Reason.FAILED, StoreErrors.url(bucket, key) + " holds " + size
                    + " bytes, too large to hold in memory: read it in ranges");
        }
        ByteBuffer b = ByteBuffer.allocate((int) size);
        read(bucket, key, 0, b);
        return b.array();
    }

    /** Bytes [position, position + dst.remaining()) of the object into dst. */
    public void read(String bucket, String key, long position, ByteBuffer dst) throws IOException {
        int n = dst.remaining();
        read(bucket, key, position, n, Sinks.into(dst));
    }

    /**
     * Bytes [position, position + length) of the object to sink, in order, with one ranged GET; a body that breaks
     * is continued with a GET of the bytes still missing (README.md, retry loop 2).
     */
    public void read(String bucket, String key, long position, long length, WritableByteChannel sink)
            throws IOException {
        read(bucket, key, position, length, sink, NO_DEADLINE);
    }

    /**
     * As {@link #read(String, String, long, long, WritableByteChannel)}, ended at {@code deadline}
     * (System.nanoTime(); {@link #NO_DEADLINE}: the client's bounds only) whatever the store does (README.md, "A
     * caller's deadline"): then a {@code NOT_ANSWERING} line when the store answered no request of this client since
     * this read began (it stopped answering), else a {@code FAILED} one (it answers, but too slowly).
     */
    public void read(String bucket, String key, long position, long length, WritableByteChannel sink,
            long deadline) throws IOException {
        if (length <= 0) {
            return;
        }
        long end = position + length;
        long at = position;
        long began = System.nanoTime();
        long bound = Math.min(deadline, began + StoreTiming.READ_TIMEOUT.toNanos());
        int resumes = 0;
        byte[] buf = new byte[(int) Math.min(StoreTiming.COPY_BUFFER_BYTES, length)];
        while (at < end) {
            ResponseInputStream<GetObjectResponse> in;
            try {
                in = s3.getObject(cut(GetObjectRequest.builder().bucket(bucket).key(key)
                        .range("bytes=" + at + "-" + (end - 1)), deadline, bucket, key, began).build());
            } catch (SdkException e) {
                throw StoreDeadlines.passed(deadline) ? late(bucket, key, began) : map(e, "GET", bucket, key);
            }
            IOException broke = null;
            StoreDeadlines.Guard guard = deadlines.abortAt(deadline, in);
            try (in; guard) {
                long want = end - at;
                Long answered = in.response().contentLength();
                if (answered != null && answered < want) {
                    throw new StoreException(StoreException.Reason.FAILED, StoreErrors.url(bucket, key)
                            + " ends before byte " + end + " (" + (at + answered)
                            + " bytes): it changed since it was listed");
                }
                while (at < end) {
                    int n;
                    try {
                        n = in.read(buf, 0, (int) Math.min(buf.length, end - at));
                    } catch (IOException e) {
                        broke = e;
                        break;
                    }
                    if (n < 0) {
                        broke = new IOException("premature end of the body");
                        break;
                    }
                    ByteBuffer bb = ByteBuffer.wrap(buf, 0, n);
                    while (bb.hasRemaining()) {
                        sink.write(bb);
                    }
                    counters.bytesIn(n);
                    at += n;
                }
            } catch (IOException closeFailed) {
                if (broke == null && at < end) {
                    broke = closeFailed;
                }
            }
            if (broke != null) {
                if (guard.fired() || StoreDeadlines.passed(deadline)) {
                    throw late(bucket, key, began);
                }
                if (++resumes > StoreTiming.BODY_RESUMES || System.nanoTime() > bound) {
                    throw new StoreException(StoreException.Reason.NOT_ANSWERING, "the object store at "
                            + endpointName + " broke off reading " + StoreErrors.url(bucket, key) + " at byte " + at
                            + " (" + StoreErrors.describe(broke) + ") " + resumes
                            + " times: check that the store is up and reachable");
                }
                counters.resume();
                sleep(Math.min(backoff(resumes), StoreDeadlines.left(deadline).toMillis()));
            }
        }
    }

    /** The request with its timeouts cut to what is left before deadline; past it, the read ends here. */
    private GetObjectRequest.Builder cut(GetObjectRequest.Builder b, long deadline, String bucket, String key,
            long began) throws StoreException {
        if (deadline == NO_DEADLINE) {
            return b;
        }
        Duration left = StoreDeadlines.left(deadline);
        if (left.isZero()) {
            throw late(bucket, key, began);
        }
        Duration call = left.compareTo(settings.apiCallTimeout()) < 0 ? left : settings.apiCallTimeout();
        Duration attempt = left.compareTo(settings.attemptTimeout()) < 0 ? left : settings.attemptTimeout();
        return b.overrideConfiguration(o -> o.apiCallTimeout(call).apiCallAttemptTimeout(attempt));
    }

    /** A read that reached its caller's deadline: silent (no answer to anything since it began) or slow. */
    StoreException late(String bucket, String key, long began) {
        long s = Math.max(1, (System.nanoTime() - began + 500_000_000L) / 1_000_000_000L);
        if (counters.lastAnswerNanos() - began < 0) {
            return new StoreException(StoreException.Reason.NOT_ANSWERING, "the object store at " + endpointName
                    + " gave no answer to GET " + StoreErrors.url(bucket, key) + " within " + s + " s");
        }
        return new StoreException(StoreException.Reason.FAILED, "the object store at " + endpointName + " answers,"
                + " but GET " + StoreErrors.url(bucket, key) + " did not arrive within " + s + " s (throttling or"
                + " a slow store): lower the parallelism or try later");
    }

    /**
     * A large range in {@link StoreTiming#READ_PART_BYTES} parts, up to {@link StoreTiming#PARALLEL_PARTS} in flight
     * on the pool, delivered to sink in order (each part buffered in memory until its turn).
     */
    public void readParallel(String bucket, String key, long position, long length, WritableByteChannel sink)
            throws IOException {
        transfers.readParallel(bucket, key, position, length, sink, NO_DEADLINE);
    }

    /** As {@link #readParallel(String, String, long, long, WritableByteChannel)}, ended at {@code deadline}. */
    public void readParallel(String bucket, String key, long position, long length, WritableByteChannel sink,
            long deadline) throws IOException {
        transfers.readParallel(bucket, key, position, length, sink, deadline);
    }

    /** A large range in parallel parts, each written where it belongs in file (from filePosition on). */
    public void readToFile(String bucket, String key, long position, long length, FileChannel file,
            long filePosition) throws IOException {
        transfers.readToFile(bucket, key, position, length, file, filePosition);
    }

    /** A small object in one PUT. */
    public void put(String bucket, String key, byte[] bytes) throws StoreException {
        try {
            s3.putObject(PutObjectRequest.builder().bucket(bucket).key(key).build(), RequestBody.fromBytes(bytes));
            counters.bytesOut(bytes.length);
        } catch (SdkException e) {
            throw map(e, "PUT", bucket, key);
        }
    }

    /**
     * A file as one object: one PUT up to {@link StoreTiming#UPLOAD_PART_BYTES}, else a multipart upload, its parts
     * in parallel on the pool; a failed upload is aborted (no parts left to pay for).
     */
    public void upload(String bucket, String key, Path file) throws IOException {
        upload(bucket, key, file, java.util.Map.of(), n -> { });
    }

    /**
     * As {@link #upload(String, String, Path)}, with user metadata on the object and {@code progress} told the bytes
     * of each part (or of the single PUT) once it is stored (from the pool's threads: it must be thread-safe).
     */
    public void upload(String bucket, String key, Path file, java.util.Map<String, String> metadata,
            java.util.function.LongConsumer progress) throws IOException {
        transfers.upload(bucket, key, file, metadata, progress);
    }

    /** Every object under prefix ("" for the whole bucket), in key order, page by page. */
    public List<ObjectInfo> list(String bucket, String prefix) throws StoreException {
        List<ObjectInfo> out = new ArrayList<>();
        String token = null;
        do {
            ListObjectsV2Response r;
            try {
                r = s3.listObjectsV2(ListObjectsV2Request.builder().bucket(bucket).prefix(prefix)
                        .maxKeys(StoreTiming.LIST_PAGE_KEYS).continuationToken(token).build());
            } catch (SdkException e) {
                throw map(e, "LIST", bucket, prefix);
            }
            for (S3Object o : r.contents()) {
                out.add(new ObjectInfo(o.key(), o.size()));
            }
            token = Boolean.TRUE.equals(r.isTruncated()) ? r.nextContinuationToken() : null;
        } while (token != null);
        return out;
    }

    /**
     * One level under prefix (which ends with '/' or is ""), delimited by '/': the objects there and the common
     * prefixes below, page by page, each in key order.
     */
    public Level listLevel(String bucket, String prefix) throws StoreException {
        List<Listed> objects = new ArrayList<>();
        List<String> prefixes = new ArrayList<>();
        String token = null;
        do {
            ListObjectsV2Response r;
            try {
                r = s3.listObjectsV2(ListObjectsV2Request.builder().bucket(bucket).prefix(prefix).delimiter("/")
                        .maxKeys(StoreTiming.LIST_PAGE_KEYS).continuationToken(token).build());
            } catch (SdkException e) {
                throw map(e, "LIST", bucket, prefix);
            }
            for (S3Object o : r.contents()) {
                objects.add(new Listed(o.key(), o.size(), o.lastModified()));
            }
            for (var p : r.commonPrefixes()) {
                prefixes.add(p.prefix());
            }
            token = Boolean.TRUE.equals(r.isTruncated()) ? r.nextContinuationToken() : null;
        } while (token != null);
        return new Level(objects, prefixes);
    }

    /** Deletes one object (no error if it is not there: S3's semantics). */
    public void delete(String bucket, String key) throws StoreException {
        try {
            s3.deleteObject(DeleteObjectRequest.builder().bucket(bucket).key(key).build());
        } catch (SdkException e) {
            throw map(e, "DELETE", bucket, key);
        }
    }

    /** Creates a bucket (tests, tools); one that the caller already owns is fine. */
    public void createBucket(String bucket) throws StoreException {
        try {
            s3.createBucket(CreateBucketRequest.builder().bucket(bucket).build());
        } catch (S3Exception e) {
            String code = StoreErrors.code(e);
            if (!"BucketAlreadyOwnedByYou".equals(code)) {
                throw map(e, "CREATE", bucket, "");
            }
        } catch (SdkException e) {
            throw map(e, "CREATE", bucket, "");
        }
    }

    @Override
    public void close() {
        pool.shutdownNow();
        s3.close();
        deadlines.close();
    }

    /** The one-line failure of op on s3://bucket/key (the SDK's, translated). */
    StoreException map(SdkException e, String op, String bucket, String key) {
        return errors.map(e, op, bucket, key);
    }

    // ---- helpers

    /** SIZE of a Content-Range "bytes A-B/SIZE", or -1 when absent or not said ("/*"). */
    private static long totalOf(String range) {
        int slash = range == null ? -1 : range.lastIndexOf('/');
        try {
            return slash < 0 ? -1 : Long.parseLong(range.substring(slash + 1).strip());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static long backoff(int attempt) {
        long cap = Math.min(StoreTiming.BACKOFF_MAX.toMillis(), StoreTiming.BACKOFF_BASE.toMillis() << Math.min(attempt,
                20));
        return ThreadLocalRandom.current().nextLong(cap + 1);   // full jitter
    }

    private static void sleep(long ms) throws IOException {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while waiting to retry");
        }
    }
}
