package org.fanstore.runtime.broadcast;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.fanstore.runtime.fetch.RemoteFetcher;
import org.fanstore.runtime.world.BoundedWait;
import org.fanstore.runtime.world.MpiTags;
import org.fanstore.runtime.world.MpiWorld;
import org.fanstore.runtime.world.PackedMessages;
import org.fanstore.runtime.world.Pending;

/**
 * Rank 0's copy of the metadata table to every other rank, as a pipelined chain: rank r receives each chunk from
 * r - 1 and forwards it to r + 1 while the next chunks arrive, so N ranks cost about one transfer of the table plus
 * N - 1 chunk times, not log N whole copies (a tree) or N - 1 copies sent by rank 0 (a star).
 *
 * <p>Wire (all on COMM_WORLD, rank r to r + 1 only): one header message on {@link MpiTags#TABLE_HEADER}, bytes
 * {@code i64 length} (big-endian; -1 when rank 0 failed) then, when failed, the UTF-8 message every rank reports;
 * then chunk k ({@code [k * CHUNK_BYTES, ...)} of the table) as a PACKED message on {@code TABLE_CHUNK_FIRST + k};
 * then the verdict on {@link MpiTags#TABLE_TRAILER}: one byte, 0 for a good table, else 1 and the UTF-8 refusal
 * (rank 0 reads the table while it sends it, so its CRC is judged only after the last chunk).
 * Chunks stay below the protocol switch limit, so every send is eager and a receiver may post at most
 * {@link #WINDOW} receives ahead. Every wait is bounded by the caller's timeout.
 */
public final class TableBroadcast {
    /** Data bytes per chunk: eager messages, as fetch replies. */
    static final int CHUNK_BYTES = RemoteFetcher.DEFAULT_CHUNK_BYTES;
    /** Chunk buffers per rank: receives posted ahead of the chunk being landed and forwarded. */
    static final int WINDOW = 4;
    private static final int HEADER_BYTES = 8;
    private static final int MAX_MESSAGE = 4096;

    /** Where a receiving rank lands the table. */
    public interface Receiver {
        /** Called once, before any chunk, with the table's length. */
        void begin(long length) throws IOException;

        /** The bytes at {@code offset} of the table (position to limit); in order, each once. */
        void chunk(ByteBuffer data, long offset) throws IOException;
    }

    private TableBroadcast() {
    }

    /** Where rank 0 takes the table from: read in order while the chunks already read travel down the chain. */
    public interface Source {
        /** Bytes {@code [offset, offset + length)} of the table, read by the time it returns (in order, each once). */
        ByteBuffer read(long offset, int length) throws IOException;

        /** After the last chunk: null when the whole table is good, else the one-line refusal every rank reports. */
        String verdict();
    }

    /**
     * Rank 0: sends the {@code length} bytes {@code source} reads down the chain, reading chunk k + 1 while chunk k
     * travels, then the verdict (the CRC can only be judged at the end). A read that fails part-way sends zeros for
     * the rest, so no rank waits for a chunk that never comes, and that failure as the verdict.
     *
     * @return the verdict: null when the table was good
     */
    public static String send(MpiWorld world, long length, Source source, Duration timeout) throws IOException {
        long deadline = BoundedWait.deadlineAfter(timeout);
        sendHeader(world, length, null, deadline);
        ByteBuffer[] buffers = new ByteBuffer[WINDOW];
        Pending[] sends = new Pending[WINDOW];
        String failed = null;
        try {
            for (long k = 0, chunks = chunks(length); k < chunks; k++) {
                int b = (int)(k % WINDOW);
                if (buffers[b] == null) {
                    buffers[b] = PackedMessages.forSending(CHUNK_BYTES);
                }
                int n = (int)Math.min(CHUNK_BYTES, length - k * CHUNK_BYTES);
                ByteBuffer from = null;
                if (failed == null) {
                    try {
                        from = source.read(k * CHUNK_BYTES, n);
                    } catch (IOException e) {
                        failed = e.getMessage();
                    }
                }
                await(world, sends[b], deadline, "sending chunk " + (k - WINDOW) + " of the metadata table");
                ByteBuffer into = PackedMessages.slice(buffers[b], PackedMessages.sendOffset(), n);
                if (from != null) {
                    into.put(from);
                } else {
                    while (into.hasRemaining()) {
                        into.put((byte)0);
                    }
                }
                sends[b] = world.isendPacked(buffers[b], n, 1, tag(k));
            }
            for (Pending r : sends) {
                await(world, r, deadline, "sending the metadata table");
            }
            String verdict = failed != null ? failed : source.verdict();
            byte[] text = verdict == null ? new byte[0] : verdict.getBytes(StandardCharsets.UTF_8);
            byte[] trailer = new byte[1 + Math.min(text.length, MAX_MESSAGE)];
            trailer[0] = (byte)(verdict == null ? 0 : 1);
            System.arraycopy(text, 0, trailer, 1, trailer.length - 1);
            await(world, world.isend(trailer, trailer.length, 1, MpiTags.TABLE_TRAILER),
                    deadline, "sending the metadata table's verdict");
            return verdict;
        } catch (RuntimeException mpjFailure) { // MPJ throws MPIException, a RuntimeException
            throw world.failure(new int[] {1}, "the metadata table broadcast failed in MPJ", mpjFailure);
        }
    }

    /** Rank 0: tells every rank that the table cannot be sent, and why (each rank then fails with the message). */
    public static void fail(MpiWorld world, String message, Duration timeout) throws IOException {
        if (world.size() >= 2) {
            sendHeader(world, -1, message, BoundedWait.deadlineAfter(timeout));
        }
    }

    /**
     * Ranks 1..N-1: receives the table into {@code receiver}, forwarding every piece to the next rank.
     *
     * @throws IOException with rank 0's message when rank 0 could not send the table
     */
    public static void receive(MpiWorld world, Receiver receiver, Duration timeout) throws IOException {
        long deadline = BoundedWait.deadlineAfter(timeout);
        int from = world.rank() - 1;
        int next = world.rank() + 1 < world.size() ? world.rank() + 1 : -1;
        byte[] header = new byte[HEADER_BYTES + MAX_MESSAGE];
        Pending headerRecv;
        Pending headerSend = null;
        try {
            headerRecv = world.irecv(header, header.length, from, MpiTags.TABLE_HEADER);
            if (!headerRecv.until(deadline)) {
                throw world.failure(new int[] {from}, "waiting for the metadata table timed out", null);
            }
            int received = headerRecv.byteCount();
            if (next >= 0) {
                headerSend = world.isend(header, received, next, MpiTags.TABLE_HEADER);
            }
            long length = ByteBuffer.wrap(header, 0, HEADER_BYTES).order(ByteOrder.BIG_ENDIAN).getLong();
            if (length < 0) {
                await(world, headerSend, deadline, "passing on rank 0's failure");
                throw new IOException(new String(header, HEADER_BYTES, received - HEADER_BYTES,
                        StandardCharsets.UTF_8));
            }
            receiver.begin(length);
            relay(world, receiver, length, from, next, deadline);
            await(world, headerSend, deadline, "passing on the metadata table's header");
            byte[] trailer = new byte[1 + MAX_MESSAGE];
            Pending verdict = world.irecv(trailer, trailer.length, from, MpiTags.TABLE_TRAILER);
            if (!verdict.until(deadline)) {
                throw world.failure(new int[] {from}, "waiting for the metadata table's verdict timed out", null);
            }
            int n = verdict.byteCount();
            if (next >= 0) {
                await(world, world.isend(trailer, n, next, MpiTags.TABLE_TRAILER), deadline,
                        "passing on the metadata table's verdict");
            }
            if (trailer[0] != 0) {
                throw new IOException(new String(trailer, 1, n - 1, StandardCharsets.UTF_8));
            }
        } catch (RuntimeException mpjFailure) {
            throw world.failure(next >= 0 ? new int[] {from, next} : new int[] {from},
                    "the metadata table broadcast failed in MPJ", mpjFailure);
        }
    }

    private static void relay(MpiWorld world, Receiver receiver, long length, int from, int next, long deadline)
            throws IOException {
        long chunks = chunks(length);
        ByteBuffer[] buffers = new ByteBuffer[WINDOW];
        Pending[] recvs = new Pending[WINDOW];
        Pending[] sends = new Pending[WINDOW];
        for (long k = 0; k < Math.min(WINDOW, chunks); k++) {
            int b = (int)k;
            buffers[b] = PackedMessages.forSending(CHUNK_BYTES);
            recvs[b] = world.irecvPacked(receiveView(buffers[b]), from, tag(k));
        }
        for (long k = 0; k < chunks; k++) {
            int b = (int)(k % WINDOW);
            if (!recvs[b].until(deadline)) {
                throw world.failure(new int[] {from}, "receiving chunk " + k + " of the metadata table timed out",
                        null);
            }
            int n = (int)Math.min(CHUNK_BYTES, length - k * CHUNK_BYTES);
            receiver.chunk(PackedMessages.slice(buffers[b], PackedMessages.sendOffset(), n), k * CHUNK_BYTES);
            if (next >= 0) {
                sends[b] = world.isendPacked(buffers[b], n, next, tag(k));
            }
            if (k + WINDOW < chunks) {
                await(world, sends[b], deadline, "forwarding chunk " + k + " of the metadata table");
                sends[b] = null;
                recvs[b] = world.irecvPacked(receiveView(buffers[b]), from, tag(k + WINDOW));
            }
        }
        for (Pending r : sends) {
            await(world, r, deadline, "forwarding the metadata table");
        }
    }

    /**
     * The part of a send buffer a chunk is received into: it starts {@code SEND_OVERHEAD} bytes in, so the data land
     * exactly where {@link PackedMessages#isend} sends them from and a rank forwards a chunk without copying it.
     */
    private static ByteBuffer receiveView(ByteBuffer sendBuffer) {
        ByteBuffer view = sendBuffer.duplicate();
        view.clear().position(PackedMessages.sendOffset() - PackedMessages.receiveOffset());
        return view.slice();
    }

    private static void sendHeader(MpiWorld world, long length, String message, long deadline) throws IOException {
        byte[] text = message == null ? new byte[0] : message.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, MAX_MESSAGE);
        byte[] header = new byte[HEADER_BYTES + n];
        ByteBuffer.wrap(header).order(ByteOrder.BIG_ENDIAN).putLong(length).put(text, 0, n);
        try {
            await(world, world.isend(header, header.length, 1, MpiTags.TABLE_HEADER), deadline,
                    "sending the metadata table's header");
        } catch (RuntimeException mpjFailure) {
            throw world.failure(new int[] {1}, "the metadata table broadcast failed in MPJ", mpjFailure);
        }
    }

    private static void await(MpiWorld world, Pending request, long deadline, String what) throws IOException {
        if (request != null && !request.until(deadline)) {
            throw world.failure(new int[] {world.rank() + 1 < world.size() ? world.rank() + 1 : world.rank() - 1},
                    what + " timed out", null);
        }
    }

    static long chunks(long length) {
        return (length + CHUNK_BYTES - 1) / CHUNK_BYTES;
    }

    private static int tag(long chunk) {
        if (chunk >= MpiTags.TABLE_CHUNK_LIMIT - MpiTags.TABLE_CHUNK_FIRST) {
            throw new IllegalArgumentException("metadata table too large for the broadcast: chunk " + chunk);
        }
        return MpiTags.TABLE_CHUNK_FIRST + (int)chunk;
    }
}
