package org.fanstore.prep.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import javax.net.ssl.SSLException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.ResponseTransformer;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadBucketRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;

/** The translation of the SDK's failures into one-line {@link StoreException}s, HEAD's refinement included. */
final class StoreErrors {
    private final S3Client s3;
    private final String endpointName;
    private final ObjectStore.Settings settings;

    StoreErrors(S3Client s3, String endpointName, ObjectStore.Settings settings) {
        this.s3 = s3;
        this.endpointName = endpointName;
        this.settings = settings;
    }

    StoreException refineHead(SdkException e, String op, String bucket, String key) {
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

    static String code(S3Exception e) {
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
    static String describe(Throwable e) {
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

    static String url(String bucket, String key) {
        return "s3://" + bucket + "/" + key;
    }
}
