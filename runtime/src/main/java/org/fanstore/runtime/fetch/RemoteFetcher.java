package org.fanstore.runtime.fetch;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.fanstore.runtime.membership.JobSecret;
import org.fanstore.runtime.stats.ServeTimes;
import org.fanstore.runtime.world.BoundedWait;
import org.fanstore.runtime.world.MpiTags;
import org.fanstore.runtime.world.MpiWorld;
import org.fanstore.runtime.world.PackedMessages;
import org.fanstore.runtime.world.Pending;

/**
 * Fetches objects (files) held by other ranks, and serves this rank's own to them (see
 * {@link FetchDispatcher} for the serving half and {@link FetchProtocol} for the wire layout).
 *
 * <p>Thread-safe: any number of threads may fetch at once. Each fetch gets its own reply tag, posts its
 * receive before sending the request (so the reply lands straight in its buffer) and waits only through
 * {@link BoundedWait}, so an owner that dies turns into a {@link RankFailedException} naming it.
 */
public final class RemoteFetcher implements AutoCloseable {
    /**
     * Just under MPJ's protocol switch limit (header included), so every data message goes eagerly: multi-MiB
     * chunks (rendezvous sends) between ranks fetching from each other with several threads can stall niodev for
     * good (threads parked in NIODevice.isend on both sides), as can multi-MiB fill ranges.
     */
    public static final int DEFAULT_CHUNK_BYTES = MpiWorld.DEFAULT_PROTOCOL_SWITCH_LIMIT - 4096;
    public static final int DEFAULT_WORKERS = 4;

    private final MpiWorld world;
    private final FetchDispatcher dispatcher;
    private final int chunkBytes;
    private final JobSecret secret;
    private final AtomicLong replySequence = new AtomicLong();
    /** Each fetching thread's two direct receive buffers ({@link PackedMessages}), kept between fetches: allocating
     * (and zeroing) up to two chunks per fetch would cost as much as the copy itself for multi-MiB objects. At most
     * 2 x (chunk + header) per thread that ever fetched; dropped after a failed fetch. */
    private final ThreadLocal<ByteBuffer[]> receiveBuffers = new ThreadLocal<>();

    private RemoteFetcher(MpiWorld world, FetchDispatcher dispatcher, int chunkBytes, JobSecret secret) {
        this.world = world;
        this.dispatcher = dispatcher;
        this.chunkBytes = chunkBytes;
        this.secret = secret;
    }

    /** Starts serving {@code source} with {@link #DEFAULT_WORKERS} workers and {@link #DEFAULT_CHUNK_BYTES} chunks. */
    public static RemoteFetcher start(MpiWorld world, FetchSource source, JobSecret secret) {
        return start(world, source, secret, DEFAULT_WORKERS, DEFAULT_CHUNK_BYTES);
    }

    /**
     * Starts serving {@code source} to the other ranks of the job that shares {@code secret}; requests without
     * it are refused, and this rank's requests carry it.
     *
     * @param workers threads that read and send replies concurrently
     * @param chunkBytes the largest data message this rank asks owners for, 1..8 MiB
     */
    public static RemoteFetcher start(MpiWorld world, FetchSource source, JobSecret secret, int workers,
            int chunkBytes) {
        if (chunkBytes < 1 || chunkBytes > FetchProtocol.MAX_CHUNK_BYTES) {
            throw new IllegalArgumentException("chunkBytes must be 1.." + FetchProtocol.MAX_CHUNK_BYTES
                    + ", got " + chunkBytes);
        }
        FetchDispatcher dispatcher = new FetchDispatcher(world, source, secret, workers);
        dispatcher.start();
        return new RemoteFetcher(world, dispatcher, chunkBytes, secret);
    }

    /** Reports how long this rank, as holder, took to start answering each reader's request. */
    public void timeServing(ServeTimes times) {
        dispatcher.timeServing(times);
    }

    /**
     * Copies the whole object {@code id} held by {@code owner} into {@code sink}.
     *
     * @param expectedLength the length the metadata gives; a different length at the owner is an error
     * @param timeout the longest the owner may stay silent (before the first byte, and between chunks)
     * @throws RankFailedException if the owner (or the device) died or stayed silent for {@code timeout}
     * @throws RemoteFetchException if the owner answered that it cannot serve the object
     */
    public void fetch(int owner, long id, long expectedLength, WritableByteChannel sink, Duration timeout)
            throws IOException {
        transfer(FetchProtocol.KIND_FETCH_WHOLE, owner, id, 0, expectedLength, sink, timeout, true);
    }

    /**
     * Copies {@code length} bytes of object {@code id} from {@code position} into {@code sink}.
     *
     * @return the whole object's length at the owner
     * @throws RankFailedException if the owner (or the device) died or stayed silent for {@code timeout}
     * @throws RemoteFetchException if the owner answered that it cannot serve the range
     */
    public long fetchRange(int owner, long id, long position, long length, WritableByteChannel sink, Duration timeout)
            throws IOException {
        return transfer(FetchProtocol.KIND_FETCH, owner, id, position, length, sink, timeout, true);
    }

    /**
     * {@link #fetchRange} for the fill path, which has another source for the range: a failure or a silent owner
     * throws {@link RankFailedException} without ending this rank (the liveness watch reports a peer that died).
     * {@code forReader}: a reader waits for it, and the owner serves it at normal CPU priority (background ranges
     * at the lowest).
     */
    public long fetchRangeQuietly(int owner, long id, long position, long length, WritableByteChannel sink,
            Duration timeout, boolean forReader) throws IOException {
        return transfer(forReader ? FetchProtocol.KIND_FETCH_FOR_READER : FetchProtocol.KIND_FETCH, owner, id,
                position, length, sink, timeout, false);
    }

    private long transfer(int kind, int owner, long id, long position, long length, WritableByteChannel sink,
            Duration timeout, boolean report) throws IOException {
        if (owner < 0 || owner >= world.size()) {
            throw new IllegalArgumentException("owner " + owner + " is outside 0.." + (world.size() - 1));
        }
        int tag = MpiTags.reply(replySequence.getAndIncrement());
        String what = "fetch of object " + id + " [" + position + ", +" + length + ") from rank " + owner;
        int firstLength = FetchProtocol.REPLY_HEADER_BYTES + (int) Math.min(length, chunkBytes);
        ByteBuffer[] buffers = receiveBuffers(firstLength, length + FetchProtocol.REPLY_HEADER_BYTES > firstLength);
        // until the reply is whole, a failure leaves MPJ requests posted on these buffers: never reuse them
        receiveBuffers.remove();
        try {
            ByteBuffer first = buffers[0];
            Pending firstArrives = world.irecvPacked(first, owner, tag);
            byte[] request = FetchProtocol.encode(new FetchProtocol.Request(kind, world.rank(),
                    tag, chunkBytes, id, position, length), secret);
            Pending sent = world.isend(request, request.length, owner, MpiTags.FETCH_REQUEST);
            await(sent, owner, timeout, what + ": sending the request", report);
            await(firstArrives, owner, timeout, what + ": waiting for the reply", report);

            int at = PackedMessages.receiveOffset();
            int status = FetchProtocol.status(first, at);
            long objectLength = FetchProtocol.objectLength(first, at);
            if (status != FetchProtocol.STATUS_OK) {
                RemoteFetchException.Reason reason = FetchProtocol.reasonOf(status);
                String why = objectLength < 0 ? ""
                        : reason == RemoteFetchException.Reason.NOT_HELD ? " (the owner is filling it: not yet)"
                        : " (the owner's copy has " + objectLength + " bytes; do the partitions and the metadata"
                        + " come from the same prep?)";
                throw new RemoteFetchException(owner, id, reason, objectLength, "rank " + world.rank() + ": " + what
                        + " refused: " + reason + why);
            }
            if (FetchProtocol.replyLength(first, at) != length) {
                throw new RemoteFetchException(owner, id, RemoteFetchException.Reason.BAD_REQUEST, what
                        + ": owner announced " + FetchProtocol.replyLength(first, at) + " bytes; version mismatch?");
            }
            receiveRest(owner, tag, first, firstLength, buffers[1], length, sink, timeout, what, report);
            receiveBuffers.set(buffers);
            return objectLength;
        } catch (RuntimeException mpjFailure) { // MPJ throws MPIException, a RuntimeException
            throw world.failure(new int[] {owner}, what + " failed in MPJ", mpjFailure, report);
        }
    }

    /**
     * Writes the first message's data, then the remaining chunks, keeping the next receive posted while the
     * current chunk goes to the sink.
     */
    private void receiveRest(int owner, int tag, ByteBuffer first, int firstLength, ByteBuffer spare, long length,
            WritableByteChannel sink, Duration timeout, String what, boolean report) throws IOException {
        int firstData = firstLength - FetchProtocol.REPLY_HEADER_BYTES;
        long remaining = length - firstData;
        long posted = 0;
        Pending next = null;
        if (remaining > 0) {
            posted = Math.min(remaining, chunkBytes);
            next = world.irecvPacked(spare, owner, tag);
        }
        int at = PackedMessages.receiveOffset();
        writeFully(sink, first, at + FetchProtocol.REPLY_HEADER_BYTES, firstData);
        // 'first' is free again: from here on it and 'spare' alternate, data starting at 'at'.
        ByteBuffer arriving = spare;
        ByteBuffer free = first;
        while (next != null) {
            await(next, owner, timeout, what + ": waiting for data, " + remaining + " bytes to go", report);
            int got = (int) posted;
            remaining -= got;
            next = null;
            if (remaining > 0) {
                posted = Math.min(remaining, chunkBytes);
                next = world.irecvPacked(free, owner, tag);
            }
            writeFully(sink, arriving, at, got);
            ByteBuffer swap = arriving;
            arriving = free;
            free = swap;
        }
    }

    /**
     * This thread's buffers, grown if needed: [0] takes header + first chunk, [1] (only if {@code twoNeeded})
     * the next chunk while [0]'s data goes to the sink; both then alternate, each of at least
     * {@code firstLength} bytes. A receive posted on one may take any message up to its capacity: the owner
     * sends exactly the lengths this side expects (FetchProtocol).
     */
    private ByteBuffer[] receiveBuffers(int firstLength, boolean twoNeeded) {
        ByteBuffer[] b = receiveBuffers.get();
        if (b == null) {
            b = new ByteBuffer[2];
        }
        if (b[0] == null || b[0].capacity() < PackedMessages.receiveOffset() + firstLength) {
            b[0] = PackedMessages.forReceiving(firstLength);
        }
        if (twoNeeded && (b[1] == null || b[1].capacity() < PackedMessages.receiveOffset() + firstLength)) {
            b[1] = PackedMessages.forReceiving(firstLength);
        }
        return b;
    }

    private void await(Pending request, int owner, Duration timeout, String what, boolean report)
            throws IOException {
        if (!request.until(BoundedWait.deadlineAfter(timeout))) {
            throw world.failure(new int[] {owner}, what + ": nothing for " + timeout.toMillis() + " ms", null,
                    report);
        }
    }

    private static void writeFully(WritableByteChannel sink, ByteBuffer data, int offset, int length)
            throws IOException {
        ByteBuffer b = PackedMessages.slice(data, offset, length);
        while (b.hasRemaining()) {
            sink.write(b);
        }
    }

    /**
     * Stops serving. Every rank calls it after a barrier, when no rank fetches any more: each rank's stop
     * also ends its peers' serving. A request that still arrives goes unanswered and its requester times out.
     *
     * @return whether the dispatcher stopped within the time allowed
     */
    public boolean close(Duration timeout) {
        return dispatcher.stop(timeout);
    }

    @Override
    public void close() {
        close(SERVICE_CLOSE);
    }
}
