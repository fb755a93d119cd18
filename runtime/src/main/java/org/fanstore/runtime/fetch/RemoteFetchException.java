package org.fanstore.runtime.fetch;

import java.io.IOException;

/**
 * The owner answered, but could not serve the request: the runtime maps {@link Reason#NOT_HELD} to
 * ENOENT and the others to EIO; {@link Reason#UNAUTHORIZED} means the
 * two ranks were given different job secrets. (An owner that does not answer is a {@link RankFailedException}.)
 */
public final class RemoteFetchException extends IOException {
    private static final long serialVersionUID = 1L;

    /** Why the owner refused; the codes travel on the wire (see {@link FetchProtocol}). */
    public enum Reason {
        /** The owner does not hold this id: placement or metadata disagree. */
        NOT_HELD,
        /** The owner failed to read its local copy (its log has the cause). */
        READ_FAILED,
        /** The range lies outside the object, or the length differs from what the requester expected. */
        BAD_RANGE,
        /** The request itself was malformed (e.g. an unsupported chunk size): a version mismatch. */
        BAD_REQUEST,
        /** The request did not carry this job's secret: it comes from another job or another user. */
        UNAUTHORIZED
    }

    private final int owner;
    private final long id;
    private final Reason reason;
    private final long objectLength;

    public RemoteFetchException(int owner, long id, Reason reason, String message) {
        this(owner, id, reason, -1, message);
    }

    /** @param objectLength the object's length in the owner's refusal, -1 when it sent none (README.md) */
    public RemoteFetchException(int owner, long id, Reason reason, long objectLength, String message) {
        super(message);
        this.owner = owner;
        this.id = id;
        this.reason = reason;
        this.objectLength = objectLength;
    }

    /**
     * Whether the owner refused with {@link Reason#NOT_HELD} but fills the object: the range has not landed there
     * yet and will (README.md, the status table).
     */
    public boolean ownerFills() {
        return reason == Reason.NOT_HELD && objectLength >= 0;
    }

    public int owner() {
        return owner;
    }

    public long id() {
        return id;
    }

    public Reason reason() {
        return reason;
    }
}
