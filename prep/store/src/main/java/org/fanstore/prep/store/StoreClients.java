package org.fanstore.prep.store;

import java.net.URI;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.retries.api.BackoffStrategy;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;

/** The construction of the S3 client and its pool from the environment or {@link ObjectStore.Settings}. */
final class StoreClients {
    private StoreClients() {
    }

    /**
     * The settings the AWS conventions name: endpoint from {@code AWS_ENDPOINT_URL_S3} or {@code AWS_ENDPOINT_URL}
     * (path-style), the default credentials and region chains, the default timing.
     */
    static ObjectStore.Settings fromEnvironment() throws StoreException {
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
        return new ObjectStore.Settings(endpoint, null, null, null, StoreTiming.API_CALL_TIMEOUT,
                StoreTiming.ATTEMPT_TIMEOUT, StoreTiming.READ_IDLE_TIMEOUT, StoreTiming.MAX_ATTEMPTS);
    }

    /** The credentials the settings name; null keys: the default credentials chain, resolved now. */
    static AwsCredentialsProvider credentials(ObjectStore.Settings settings) throws StoreException {
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
        return credentials;
    }

    /**
     * The client for settings, counting every request and answer in counters; its own timeouts run on {@code timer}
     * (StoreDeadlines: one thread, not the SDK's default five).
     */
    static S3Client s3(ObjectStore.Settings settings, AwsCredentialsProvider credentials, StoreCounters counters,
            ScheduledExecutorService timer) {
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
                        .scheduledExecutorService(timer)
                        .addExecutionInterceptor(new Counting(counters)));
        if (settings.endpoint() != null) {
            b.endpointOverride(settings.endpoint()).forcePathStyle(true);
        } else {
            b.crossRegionAccessEnabled(true);
        }
        return b.build();
    }

    /** The {@code fanstore-s3-N} pool that runs the parts of large reads and uploads. */
    static ExecutorService pool() {
        AtomicInteger n = new AtomicInteger();
        return Executors.newFixedThreadPool(StoreTiming.PARALLEL_PARTS, r -> {
            Thread t = new Thread(r, "fanstore-s3-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** Counts every request once (by kind), before the SDK's attempts, and notes each answer (any HTTP status). */
    private static final class Counting implements ExecutionInterceptor {
        private final StoreCounters counters;

        Counting(StoreCounters counters) {
            this.counters = counters;
        }

        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            counters.request(kind(context.request()));
        }

        @Override
        public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
            counters.answered();
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
