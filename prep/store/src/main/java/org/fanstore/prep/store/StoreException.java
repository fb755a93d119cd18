package org.fanstore.prep.store;

import java.io.IOException;

/**
 * A failed object-store request. The message is ONE line naming the bucket and key (or the endpoint) and what to
 * do: never a stack trace, a class name or a secret, so callers print it as it is.
 */
public final class StoreException extends IOException {
    private static final long serialVersionUID = 1L;

    /** What went wrong, for callers that act on it (a source that is down, a key that is not there yet). */
    public enum Reason {
        NO_CREDENTIALS, BAD_CREDENTIALS, NO_BUCKET, NO_KEY, ACCESS_DENIED, NOT_ANSWERING, THROTTLED, FAILED
    }

    private final Reason reason;

    public StoreException(Reason reason, String line) {
        super(line);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }

    /** The line only: a caller that logs this exception must not get the SDK's trace. */
    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }
}
