package org.fanstore.runtime.world;

import java.nio.ByteBuffer;

import mpi.Comm;
import mpi.MPI;
import mpi.Request;
import mpjbuf.NIOBuffer;

/**
 * Raw-byte messages through MPJ Express from and into direct buffers of the caller's, with no copy into or out of a
 * Java array. With {@code MPI.BYTE} arrays, MPJ packs each array into a buffer of its own allocator (a copy and an
 * allocation per message on each side) and adds a section header; with {@code MPI.PACKED}, the message is an
 * {@code mpjbuf.Buffer} that niodev moves as it is, so a holder reads partition bytes straight into the buffer the
 * socket is written from, and a receiver hands the buffer the socket was read into straight to pwrite(2).
 *
 * <p>What this relies on, read off niodev 0.44 ({@code xdev.niodev.NIODevice}, {@code NIOSendRequest}):
 * <ul>
 * <li>send: the first {@code MPI.SEND_OVERHEAD} bytes of the buffer are niodev's, which writes its control header
 * there and then sends {@code [0, SEND_OVERHEAD + size)} as one message. The message starts with a section header
 * (8 bytes), which niodev reads to learn the message's type: without one it takes the first data byte for the type
 * and the message never completes (seen: every second chunk stalled). So a message is MPJ's own byte layout, a BYTE
 * section header and the data, as {@code MPI.BYTE} arrays send it; only the copies are gone.</li>
 * <li>receive: an eager message lands at {@code [0, size)} of the posted buffer, read from the socket into it when
 * the receive was posted first, copied from niodev's own buffer when the message came first: the data start after
 * the section header.</li>
 * <li>on completion MPJ clears and frees the {@code mpjbuf.Buffer}: a wrapper carries one message. Freeing an
 * {@code NIOBuffer} only resets its ByteBuffer's position and limit, so the direct buffer is reused; callers read
 * and write it through duplicates with absolute positions, and in big-endian order explicitly (MPJ may set the
 * order of the buffer it is given).</li>
 * </ul>
 * Messages must stay eager (below the protocol switch limit): {@link RemoteFetcher#DEFAULT_CHUNK_BYTES} keeps them
 * there, and a length above the posted buffer is a protocol error, as with arrays.
 */
public final class PackedMessages {
    private PackedMessages() {
    }

    /** Where a message's data start in a buffer to send: after niodev's header room and the section header. */
    public static int sendOffset() {
        return MPI.SEND_OVERHEAD + mpjbuf.Buffer.SECTION_OVERHEAD;
    }

    /** Where a received message's data start: after its section header. */
    public static int receiveOffset() {
        return mpjbuf.Buffer.SECTION_OVERHEAD;
    }

    /** A direct buffer for messages of up to {@code bytes} data bytes to send. */
    public static ByteBuffer forSending(int bytes) {
        return ByteBuffer.allocateDirect(sendOffset() + bytes);
    }

    /** A direct buffer for messages of up to {@code bytes} data bytes to receive. */
    public static ByteBuffer forReceiving(int bytes) {
        return ByteBuffer.allocateDirect(receiveOffset() + bytes);
    }

    /** Sends the {@code length} data bytes at {@link #sendOffset()} of {@code buffer}, untouched until done. */
    static Request isend(Comm comm, ByteBuffer buffer, int length, int dest, int tag) {
        if (sendOffset() + length > buffer.capacity()) {
            throw new IllegalArgumentException(length + " bytes do not fit a " + buffer.capacity() + "-byte buffer");
        }
        mpjbuf.Buffer message = new mpjbuf.Buffer(new NIOBuffer(buffer.capacity(), buffer), MPI.SEND_OVERHEAD,
                buffer.capacity());
        try {
            message.putSectionHeader(mpjbuf.Type.BYTE);
        } catch (mpjbuf.BufferException e) {
            throw new IllegalStateException("MPJ refused a section header in a fresh buffer", e);
        }
        message.setSize(mpjbuf.Buffer.SECTION_OVERHEAD + length);
        return comm.Isend(message, 0, length, MPI.PACKED, dest, tag);
    }

    /** Posts a receive of a message of up to the buffer's capacity; its data land at {@link #receiveOffset()}. */
    static Request irecv(Comm comm, ByteBuffer buffer, int source, int tag) {
        mpjbuf.Buffer message = new mpjbuf.Buffer(new NIOBuffer(buffer.capacity(), buffer), 0, buffer.capacity());
        return comm.Irecv(message, 0, buffer.capacity(), MPI.PACKED, source, tag);
    }

    /** A duplicate of {@code buffer} positioned on {@code [offset, offset + length)}. */
    public static ByteBuffer slice(ByteBuffer buffer, int offset, int length) {
        ByteBuffer b = buffer.duplicate();
        b.clear();
        b.position(offset).limit(offset + length);
        return b;
    }
}
