package org.fanstore.runtime.fetch;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.fanstore.runtime.membership.JobSecret;

/**
 * The remote-fetch wire layout, in one place: offsets, kinds, statuses and the codecs both ends use. The specification
 * (every field, the reply's messages, tags, status codes, errors, versions) is "Remote fetch: wire format" in this
 * package's README.md; golden vectors in tests/vectors/fetch/ (FetchProtocolVectorsTest, test_fetch_vectors.c).
 *
 * <p>What must hold: big-endian on both ends, whatever a buffer's order (MPJ may set the order of a buffer it is
 * given). A request is {@link #REQUEST_BYTES} bytes; the owner answers one whose version or secret is wrong with
 * {@link RemoteFetchException.Reason#UNAUTHORIZED} and nothing else, so the secret is checked before any field is
 * acted on. The reply's first message is the {@link #REPLY_HEADER_BYTES}-byte header and, when OK, the first chunk;
 * every further message is raw data, each at most the requested chunk size: both ends know each message's size in
 * advance, and MPI's non-overtaking rule (one pair of ranks, one tag) keeps the chunks in order without sequence
 * numbers. Chunking bounds the buffers on both sides and lets objects exceed a Java array (2 GiB). Requests are
 * {@code MPI.BYTE} arrays; replies are {@code MPI.PACKED} raw bytes ({@link PackedMessages}), so neither end copies
 * them through an array. Status codes are {@code Reason.ordinal() + 1}: reordering that enum changes the wire, so
 * bump {@link #LAYOUT_VERSION} with it.
 */
final class FetchProtocol {
    /** Request: what it asks for ({@link #KIND_FETCH}, {@link #KIND_FETCH_WHOLE}, {@link #KIND_FETCH_FOR_READER},
     * or {@link #KIND_SHUTDOWN}; 5 is retired and must not be reused in this layout version). */
    static final int KIND_OFFSET = 0;
    /** Request: the rank to reply to. */
    static final int REQUESTER_OFFSET = 4;
    /** Request: the tag the requester posted its receives on. */
    static final int REPLY_TAG_OFFSET = 8;
    /** Request: the largest data message the requester will receive. */
    static final int CHUNK_BYTES_OFFSET = 12;
    /** Request: the object id. */
    static final int ID_OFFSET = 16;
    /** Request: first byte wanted. */
    static final int POSITION_OFFSET = 24;
    /** Request: bytes wanted. */
    static final int LENGTH_OFFSET = 32;
    /** Request: {@link #LAYOUT_VERSION}, then 4 bytes of zero padding. */
    static final int VERSION_OFFSET = 40;
    /** Request: the job secret, {@link JobSecret#BYTES} bytes. */
    static final int SECRET_OFFSET = 48;
    static final int REQUEST_BYTES = SECRET_OFFSET + JobSecret.BYTES;

    static final int LAYOUT_VERSION = 3;

    static final int KIND_FETCH = 1;
    /** Like {@link #KIND_FETCH}, but the owner refuses with BAD_RANGE unless the range ends exactly at the
     * object's end: a whole-object fetch with a stale length fails before any byte reaches the sink. */
    static final int KIND_FETCH_WHOLE = 3;
    /** Like {@link #KIND_FETCH}, but a reader is waiting for the range (it rides a partition pull): the owner
     * serves it with readers' whole-object fetches, at normal CPU priority (background ranges at the lowest). */
    static final int KIND_FETCH_FOR_READER = 4;
    /** Sent by a stopping rank to each peer: ends the peer's dispatcher (see FetchDispatcher#stop). */
    static final int KIND_SHUTDOWN = 2;

    /** Reply header: {@link #STATUS_OK} or a {@link RemoteFetchException.Reason} ordinal + 1. */
    static final int STATUS_OFFSET = 0;
    /** Reply header: the whole object's length at the owner, or -1 if not held. */
    static final int OBJECT_LENGTH_OFFSET = 8;
    /** Reply header: data bytes that follow across all messages (0 on error). */
    static final int REPLY_LENGTH_OFFSET = 16;
    static final int REPLY_HEADER_BYTES = 24;

    static final int STATUS_OK = 0;

    /** Largest chunk an owner accepts: 8 MiB, so one reply buffer per worker stays small. */
    static final int MAX_CHUNK_BYTES = 8 << 20;

    private FetchProtocol() {
    }

    record Request(int kind, int requester, int replyTag, int chunkBytes, long id, long position, long length) {
    }

    static byte[] encode(Request r, JobSecret secret) {
        byte[] bytes = new byte[REQUEST_BYTES];
        ByteBuffer.wrap(bytes)
                .putInt(KIND_OFFSET, r.kind()).putInt(REQUESTER_OFFSET, r.requester())
                .putInt(REPLY_TAG_OFFSET, r.replyTag()).putInt(CHUNK_BYTES_OFFSET, r.chunkBytes())
                .putLong(ID_OFFSET, r.id()).putLong(POSITION_OFFSET, r.position()).putLong(LENGTH_OFFSET, r.length())
                .putInt(VERSION_OFFSET, LAYOUT_VERSION);
        secret.copyInto(bytes, SECRET_OFFSET);
        return bytes;
    }

    /** Whether a received request has this layout and carries {@code secret} (compared in constant time). */
    static boolean authentic(byte[] request, JobSecret secret) {
        boolean versionOk = ByteBuffer.wrap(request).getInt(VERSION_OFFSET) == LAYOUT_VERSION;
        return secret.matches(request, SECRET_OFFSET) & versionOk;
    }

    static Request decode(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        return new Request(b.getInt(KIND_OFFSET), b.getInt(REQUESTER_OFFSET), b.getInt(REPLY_TAG_OFFSET),
                b.getInt(CHUNK_BYTES_OFFSET), b.getLong(ID_OFFSET), b.getLong(POSITION_OFFSET),
                b.getLong(LENGTH_OFFSET));
    }

    /** Writes a reply header at {@code at} of {@code message} (absolute; big-endian whatever the buffer's order). */
    static void putHeader(ByteBuffer message, int at, int status, long objectLength, long replyLength) {
        ByteBuffer b = message.duplicate().order(ByteOrder.BIG_ENDIAN);
        b.putInt(at + STATUS_OFFSET, status).putInt(at + STATUS_OFFSET + 4, 0)
                .putLong(at + OBJECT_LENGTH_OFFSET, objectLength).putLong(at + REPLY_LENGTH_OFFSET, replyLength);
    }

    /** The reply header's fields, read at {@code at} of {@code message}. */
    static int status(ByteBuffer message, int at) {
        return message.duplicate().order(ByteOrder.BIG_ENDIAN).getInt(at + STATUS_OFFSET);
    }

    static long objectLength(ByteBuffer message, int at) {
        return message.duplicate().order(ByteOrder.BIG_ENDIAN).getLong(at + OBJECT_LENGTH_OFFSET);
    }

    static long replyLength(ByteBuffer message, int at) {
        return message.duplicate().order(ByteOrder.BIG_ENDIAN).getLong(at + REPLY_LENGTH_OFFSET);
    }

    static int statusOf(RemoteFetchException.Reason reason) {
        return reason.ordinal() + 1;
    }

    static RemoteFetchException.Reason reasonOf(int status) {
        RemoteFetchException.Reason[] all = RemoteFetchException.Reason.values();
        return status >= 1 && status <= all.length ? all[status - 1] : RemoteFetchException.Reason.BAD_REQUEST;
    }
}
