package org.fanstore.prep.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLException;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.core.sync.ResponseTransformer;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.retries.api.BackoffStrategy;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.AbortMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.CreateBucketRequest;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.DeleteObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadBucketRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;

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

    private final S3Client s3;
    private final String endpointName;
    private final Settings settings;
    private final StoreCounters counters = new StoreCounters();
    private final ExecutorService pool;

    private ObjectStore(Settings settings, AwsCredentialsProvider credentials) {
        this.settings = settings;
        this.endpointName = settings.endpoint() == null ? "AWS S3" : settings.endpoint().toString();
        // apache5-client, the SDK's default sync client, chosen by measurement (docs/decisions/s3-http-client.md)
        SdkHttpClient http = Apache5HttpClient.builder()
                .connectionTimeout(StoreTiming.CONNECT_TIMEOUT)
                .socketTimeout(settings.readIdleTimeout())
                .maxConnections(StoreTiming.MAX_CONNECTIONS)
                .build();
        String region = settings.region();
        if (region == null) {
            try {
                region = new DefaultAwsRegionProviderChain().getRegion().id();
            } catch (SdkException e) {
                region = "us-east-1";   // custom stores accept any region in the signature; most use this one
            }
        }
        S3ClientBuilder b = S3Client.builder()
                .httpClient(http)
                .credentialsProvider(credentials)
                .region(Region.of(region))
                // S3-compatible stores do not all take the SDK's default trailing CRC32 (aws-chunked) bodies
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .overrideConfiguration(o -> o
                        .retryStrategy(AwsRetryStrategy.standardRetryStrategy().toBuilder()
                                .maxAttempts(settings.maxAttempts())
                                .backoffStrategy(BackoffStrategy.exponentialDelay(StoreTiming.BACKOFF_BASE,
                                        StoreTiming.BACKOFF_MAX))
                                .throttlingBackoffStrategy(BackoffStrategy.exponentialDelay(StoreTiming.THROTTLE_BASE,
                                        StoreTiming.THROTTLE_MAX))
                                .circuitBreakerEnabled(false)
                                .build())
                        .apiCallTimeout(settings.apiCallTimeout())
                        .apiCallAttemptTimeout(settings.attemptTimeout())
                        .addExecutionInterceptor(new Counting()));
        if (settings.endpoint() != null) {
            b.endpointOverride(settings.endpoint()).forcePathStyle(true);
        } else {
            b.crossRegionAccessEnabled(true);
        }
        this.s3 = b.build();
        AtomicInteger n = new AtomicInteger();
        this.pool = Executors.newFixedThreadPool(StoreTiming.PARALLEL_PARTS, r -> {
            Thread t = new Thread(r, "fanstore-s3-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * The store as the AWS conventions name it: endpoint from {@code AWS_ENDPOINT_URL_S3} or {@code AWS_ENDPOINT_URL}
     * (path-style), credentials from the SDK's default chain (resolved now: "no credentials" before any work).
     */
    public static ObjectStore fromEnvironment() throws StoreException {
        String url = System.getenv("AWS_ENDPOINT_URL_S3");
        if (url == null || url.isBlank()) {
            url = System.getenv("AWS_ENDPOINT_URL");
        }
        URI endpoint = null;
        if (url != null && !url.isBlank()) {
            try {
                endpoint = URI.create(url.trim());
            } catch (IllegalArgumentException e) {
                throw new StoreException(StoreException.Reason.FAILED, "AWS_ENDPOINT_URL '" + url
                        + "' is not a URL: write it as http(s)://HOST:PORT");
            }
            if (endpoint.getScheme() == null || endpoint.getHost() == null) {
                throw new StoreException(StoreException.Reason.FAILED, "AWS_ENDPOINT_URL '" + url
                        + "' is not a URL: write it as http(s)://HOST:PORT");
            }
        }
        return connect(new Settings(endpoint, null, null, null, StoreTiming.API_CALL_TIMEOUT,
                StoreTiming.ATTEMPT_TIMEOUT, StoreTiming.READ_IDLE_TIMEOUT, StoreTiming.MAX_ATTEMPTS));
    }

    /** A store with explicit settings; null keys: the default credentials chain, resolved now. */
    public static ObjectStore connect(Settings settings) throws StoreException {
        AwsCredentialsProvider credentials;
        if (settings.accessKey() != null) {
            credentials = StaticCredentialsProvider.create(AwsBasicCredentials.create(settings.accessKey(),
                    settings.secretKey()));
        } else {
            credentials = DefaultCredentialsProvider.builder().build();
            try {
                credentials.resolveCredentials();
            } catch (SdkException e) {
                throw new StoreException(StoreException.Reason.NO_CREDENTIALS, "no credentials found for the"
                        + " object store (" + (settings.endpoint() == null ? "AWS S3" : settings.endpoint())
                        + "): set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE");
            }
        }
        return new ObjectStore(settings, credentials);
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
            throw refineHead(e, "HEAD", bucket, key);
        }
    }

    /** The object's size and user metadata (HEAD), or empty when there is no such key (the bucket exists). */
    public java.util.Optional<Head> head(String bucket, String key) throws StoreException {
        try {
            var r = s3.headObject(HeadObjectRequest.builder().bucket(bucket).key(key).build());
            return java.util.Optional.of(new Head(r.contentLength(), r.metadata()));
        } catch (SdkException e) {
            StoreException line = refineHead(e, "HEAD", bucket, key);
            if (line.reason() == StoreException.Reason.NO_KEY) {
                return java.util.Optional.empty();
            }
            throw line;
        }
    }

    /** A whole small object (a manifest, a table) in memory; at most {@link StoreTiming#SMALL_OBJECT_MAX_BYTES}. */
    public byte[] get(String bucket, String key) throws IOException {
        long size = size(bucket, key);
        if (size > StoreTiming.SMALL_OBJECT_MAX_BYTES) {
            throw new StoreException(StoreException.Reason.FAILED, url(bucket, key) + " holds " + size
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
        if (length <= 0) {
            return;
        }
        long end = position + length;
        long at = position;
        long deadline = System.nanoTime() + StoreTiming.READ_TIMEOUT.toNanos();
        int resumes = 0;
        byte[] buf = new byte[(int) Math.min(StoreTiming.COPY_BUFFER_BYTES, length)];
        while (at < end) {
            ResponseInputStream<GetObjectResponse> in;
            try {
                in = s3.getObject(GetObjectRequest.builder().bucket(bucket).key(key)
                        .range("bytes=" + at + "-" + (end - 1)).build());
            } catch (SdkException e) {
                throw map(e, "GET", bucket, key);
            }
            IOException broke = null;
            try (in) {
                long want = end - at;
                Long answered = in.response().contentLength();
                if (answered != null && answered < want) {
                    throw new StoreException(StoreException.Reason.FAILED, url(bucket, key) + " ends before byte "
                            + end + " (" + (at + answered) + " bytes): it changed since it was listed");
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
                if (++resumes > StoreTiming.BODY_RESUMES || System.nanoTime() > deadline) {
                    throw new StoreException(StoreException.Reason.NOT_ANSWERING, "the object store at "
                            + endpointName + " broke off reading " + url(bucket, key) + " at byte " + at + " ("
                            + describe(broke) + ") " + resumes + " times: check that the store is up and reachable");
                }
                counters.resume();
                sleep(backoff(resumes));
            }
        }
    }

    /**
     * A large range in {@link StoreTiming#READ_PART_BYTES} parts, up to {@link StoreTiming#PARALLEL_PARTS} in flight
     * on the pool, delivered to sink in order (each part buffered in memory until its turn).
     */
    public void readParallel(String bucket, String key, long position, long length, WritableByteChannel sink)
            throws IOException {
        int part = StoreTiming.READ_PART_BYTES;
        if (length <= part) {
            read(bucket, key, position, length, sink);
            return;
        }
        int parts = (int) ((length + part - 1) / part);
        List<Future<ByteBuffer>> inFlight = new ArrayList<>();
        int next = 0;
        try {
            for (int i = 0; i < parts; i++) {
                while (next < parts && next - i < StoreTiming.PARALLEL_PARTS) {
                    long off = position + (long) next * part;
                    int len = (int) Math.min(part, position + length - off);
                    inFlight.add(pool.submit(() -> {
                        ByteBuffer b = ByteBuffer.allocate(len);
                        read(bucket, key, off, b);
                        return b.flip();
                    }));
                    next++;
                }
                ByteBuffer b = await(inFlight.get(i));
                inFlight.set(i, null);
                while (b.hasRemaining()) {
                    sink.write(b);
                }
            }
        } finally {
            cancel(inFlight);
        }
    }

    /** A large range in parallel parts, each written where it belongs in file (from filePosition on). */
    public void readToFile(String bucket, String key, long position, long length, FileChannel file,
            long filePosition) throws IOException {
        int part = StoreTiming.READ_PART_BYTES;
        List<Future<Void>> parts = new ArrayList<>();
        try {
            for (long done = 0; done < length; done += part) {
                long off = done;
                long len = Math.min(part, length - done);
                parts.add(pool.submit(() -> {
                    read(bucket, key, position + off, len, Sinks.at(file, filePosition + off));
                    return null;
                }));
            }
            for (Future<Void> f : parts) {
                await(f);
            }
        } finally {
            cancel(parts);
        }
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
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = in.size();
            int part = StoreTiming.UPLOAD_PART_BYTES;
            if (size <= part) {
                ByteBuffer b = ByteBuffer.allocate((int) size);
                readFully(in, b, 0);
                try {
                    s3.putObject(PutObjectRequest.builder().bucket(bucket).key(key).metadata(metadata).build(),
                            RequestBody.fromBytes(b.array()));
                    counters.bytesOut(size);
                } catch (SdkException e) {
                    throw map(e, "PUT", bucket, key);
                }
                progress.accept(size);
                return;
            }
            String id;
            try {
                id = s3.createMultipartUpload(CreateMultipartUploadRequest.builder().bucket(bucket).key(key)
                        .metadata(metadata).build())
                        .uploadId();
            } catch (SdkException e) {
                throw map(e, "PUT", bucket, key);
            }
            List<Future<CompletedPart>> parts = new ArrayList<>();
            boolean done = false;
            try {
                for (int n = 1; (long) (n - 1) * part < size; n++) {
                    int number = n;
                    long off = (long) (n - 1) * part;
                    int len = (int) Math.min(part, size - off);
                    parts.add(pool.submit(() -> {
                        ByteBuffer b = ByteBuffer.allocate(len);
                        readFully(in, b, off);
                        try {
                            String etag = s3.uploadPart(UploadPartRequest.builder().bucket(bucket).key(key)
                                    .uploadId(id).partNumber(number).contentLength((long) len).build(),
                                    RequestBody.fromBytes(b.array())).eTag();
                            counters.bytesOut(len);
                            progress.accept(len);
                            return CompletedPart.builder().partNumber(number).eTag(etag).build();
                        } catch (SdkException e) {
                            throw map(e, "PUT", bucket, key);
                        }
                    }));
                }
                List<CompletedPart> completed = new ArrayList<>();
                for (Future<CompletedPart> f : parts) {
                    completed.add(await(f));
                }
                try {
                    s3.completeMultipartUpload(c -> c.bucket(bucket).key(key).uploadId(id)
                            .multipartUpload(u -> u.parts(completed)));
                } catch (SdkException e) {
                    throw map(e, "PUT", bucket, key);
                }
                done = true;
            } finally {
                if (!done) {
                    cancel(parts);
                    abort(bucket, key, id);
                }
            }
        }
    }

    private void abort(String bucket, String key, String id) {
        try {
            s3.abortMultipartUpload(AbortMultipartUploadRequest.builder().bucket(bucket).key(key).uploadId(id)
                    .build());
        } catch (SdkException e) {
            // best effort: the upload already failed with its own line; a bucket lifecycle rule reaps leftovers
        }
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
            String code = code(e);
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
    }

    // ---- errors: one line each

    private StoreException refineHead(SdkException e, String op, String bucket, String key) {
        StoreException first = map(e, op, bucket, key);
        if (first.reason() == StoreException.Reason.NO_KEY) {
            try {
                s3.headBucket(HeadBucketRequest.builder().bucket(bucket).build());
            } catch (SdkException b) {
                StoreException second = map(b, op, bucket, key);
                if (second.reason() == StoreException.Reason.NO_BUCKET) {
                    return second;
                }
            }
        } else if (first.reason() == StoreException.Reason.ACCESS_DENIED) {
            // a HEAD answer has no body: a one-byte GET says whether the key or the signature is refused
            try (InputStream in = s3.getObject(GetObjectRequest.builder().bucket(bucket).key(key).range("bytes=0-0")
                    .build(), ResponseTransformer.toInputStream())) {
                in.transferTo(OutputStream.nullOutputStream());
            } catch (SdkException g) {
                return map(g, op, bucket, key);
            } catch (IOException ignored) {
                // the refinement failed itself: keep the first line
            }
        }
        return first;
    }

    private static String code(S3Exception e) {
        return e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
    }

    StoreException map(SdkException e, String op, String bucket, String key) {
        String where = url(bucket, key);
        if (e instanceof S3Exception s) {
            String code = code(s);
            int status = s.statusCode();
            if ("SignatureDoesNotMatch".equals(code) || "InvalidAccessKeyId".equals(code)) {
                return new StoreException(StoreException.Reason.BAD_CREDENTIALS, "the object store at "
                        + endpointName + " refused the credentials (" + code + ") for " + where + ": check"
                        + " AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the profile AWS_PROFILE names");
            }
            if ("NoSuchBucket".equals(code)) {
                return new StoreException(StoreException.Reason.NO_BUCKET, "no bucket '" + bucket + "' at "
                        + endpointName + " (for " + where + "): create it, or correct the location");
            }
            if ("NoSuchKey".equals(code) || status == 404) {
                return new StoreException(StoreException.Reason.NO_KEY, "no object " + where + " at "
                        + endpointName + ": correct the location, or write the dataset there with fanstore prep");
            }
            if ("AccessDenied".equals(code) || status == 403) {
                return new StoreException(StoreException.Reason.ACCESS_DENIED, "access denied to " + where + " ("
                        + op + "): the credentials lack the permission; check the bucket policy or use others");
            }
            if (status == 503 || status == 429 || isThrottle(code)) {
                return new StoreException(StoreException.Reason.THROTTLED, "the object store at " + endpointName
                        + " kept throttling (" + (code == null ? "HTTP " + status : code) + ") " + op + " " + where
                        + " past " + settings.maxAttempts() + " attempts: lower the parallelism or try later");
            }
            if (status == 416) {
                return new StoreException(StoreException.Reason.FAILED, "a range outside " + where
                        + " was asked for: the object is shorter than its manifest says; prep it again");
            }
            return new StoreException(StoreException.Reason.FAILED, op + " " + where + " failed at " + endpointName
                    + ": HTTP " + status + (code == null ? "" : " " + code) + (status >= 500
                    ? " after " + settings.maxAttempts() + " attempts; check the store" : ""));
        }
        return new StoreException(StoreException.Reason.NOT_ANSWERING, "the object store at " + endpointName
                + " is not answering (" + describe(e) + ") for " + op + " " + where + " within "
                + settings.apiCallTimeout().toSeconds() + " s: check AWS_ENDPOINT_URL and that the store is up");
    }

    private static boolean isThrottle(String code) {
        return "SlowDown".equals(code) || "Throttling".equals(code) || "ThrottlingException".equals(code)
                || "RequestLimitExceeded".equals(code) || "TooManyRequests".equals(code)
                || "RequestThrottled".equals(code);
    }

    /** What failed, in words, from the cause chain: never a class name or a server's message. */
    private static String describe(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ConnectException) {
                return "connection refused";
            }
            if (t instanceof UnknownHostException) {
                return "unknown host";
            }
            if (t instanceof SocketTimeoutException) {
                return "timed out";
            }
            if (t instanceof SSLException) {
                return "TLS failed";
            }
            String name = t.getClass().getSimpleName();
            if (name.contains("Timeout")) {
                return "timed out";
            }
            if (t.getCause() == null && t.getMessage() != null && t.getMessage().contains("reset")) {
                return "connection reset";
            }
        }
        return "connection failed";
    }

    private static String url(String bucket, String key) {
        return "s3://" + bucket + "/" + key;
    }

    // ---- helpers

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

    private static <T> T await(Future<T> f) throws IOException {
        try {
            return f.get();
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof IOException io) {
                throw io;
            }
            if (c instanceof RuntimeException r) {
                throw r;
            }
            throw new IOException(String.valueOf(c), c);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while waiting for the object store");
        } catch (CancellationException e) {
            throw new java.io.InterruptedIOException("the transfer was cancelled");
        }
    }

    private static <T> void cancel(List<Future<T>> futures) {
        for (Future<T> f : futures) {
            if (f != null) {
                f.cancel(true);
            }
        }
    }

    private static void readFully(FileChannel in, ByteBuffer b, long position) throws IOException {
        long at = position;
        while (b.hasRemaining()) {
            int n = in.read(b, at);
            if (n < 0) {
                throw new IOException("file ended at byte " + at + " while uploading it");
            }
            at += n;
        }
        b.flip();
    }

    /** Counts every request once (by kind), before the SDK's attempts. */
    private final class Counting implements ExecutionInterceptor {
        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            counters.request(kind(context.request()));
        }

        private StoreCounters.Kind kind(SdkRequest r) {
            String n = r.getClass().getSimpleName();
            if (n.startsWith("Head")) {
                return StoreCounters.Kind.HEAD;
            }
            if (n.startsWith("GetObject")) {
                return StoreCounters.Kind.GET;
            }
            if (n.startsWith("List")) {
                return StoreCounters.Kind.LIST;
            }
            if (n.startsWith("Delete")) {
                return StoreCounters.Kind.DELETE;
            }
            if (n.contains("Multipart") || n.startsWith("UploadPart")) {
                return StoreCounters.Kind.MULTIPART;
            }
            return StoreCounters.Kind.PUT;
        }
    }
}
