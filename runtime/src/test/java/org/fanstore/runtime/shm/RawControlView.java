package org.fanstore.runtime.shm;

import static org.fanstore.runtime.shm.ControlFileDescriptor.*;

import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

import org.agrona.IoUtil;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RecordDescriptor;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.fanstore.runtime.timing.Timing;

/**
 * A second, independent mapping of a control file, for tests that play a misbehaving client: write slots and
 * ring records by hand, die half-way, send unknown ops.
 */
final class RawControlView implements AutoCloseable {
    final UnsafeBuffer buffer;
    final ManyToOneRingBuffer ring;
    final int slotSize;
    final long slotsOffset;
    private final MappedByteBuffer mapped;
    private final Path path;
    private int clientsFd = -1;

    RawControlView(final Path ctl) throws Exception {
        path = ctl;
        try (FileChannel channel = FileChannel.open(ctl, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size());
        }
        buffer = new UnsafeBuffer(mapped);
        slotSize = buffer.getInt(SLOT_SIZE_OFFSET);
        slotsOffset = buffer.getLong(SLOTS_OFFSET_OFFSET);
        final int capacity = buffer.getInt(RING_CAPACITY_OFFSET);
        ring = new ManyToOneRingBuffer(new UnsafeBuffer(buffer.addressOffset() + buffer.getLong(RING_OFFSET_OFFSET),
            capacity + RING_TRAILER_LENGTH));
    }

    int slotOffset(final int slot) {
        return (int)(slotsOffset + (long)slot * slotSize);
    }

    int state(final int slot) {
        return buffer.getIntVolatile(slotOffset(slot) + SLOT_STATE_OFFSET);
    }

    /** The owner pid of a slot's claim word. */
    int owner(final int slot) {
        return (int)(buffer.getLongVolatile(slotOffset(slot) + SLOT_CLAIM_WORD_OFFSET) >>> Integer.SIZE);
    }

    /**
     * Claims a FREE slot as a live client does: an OFD read lock on the slot's byte of {@code <ctl>.clients}
     * first (held until {@link #close}), then the CAS. Without the lock ({@link #claim}) the sweeper takes the
     * owner for dead.
     */
    boolean claimHoldingLock(final int slot, final int pid) {
        if (clientsFd < 0) {
            clientsFd = NativeCalls.LIBC.open(ClientLocks.pathFor(path).toString(), 0x80000);  // O_RDONLY|O_CLOEXEC
        }
        final byte[] flock = new byte[32];
        final java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(flock).order(java.nio.ByteOrder.nativeOrder());
        b.putShort(0, (short)0);  // F_RDLCK
        b.putLong(8, slot);
        b.putLong(16, 1);
        if (NativeCalls.LIBC.fcntl(clientsFd, 37, flock) != 0) {  // F_OFD_SETLK
            throw new IllegalStateException("cannot lock byte " + slot + " of the clients file");
        }
        return claim(slot, pid);
    }

    /** Claims a FREE slot for {@code pid} with the protocol's 64-bit CAS, holding no lock (a dead client's). */
    boolean claim(final int slot, final int pid) {
        final int word = slotOffset(slot) + SLOT_CLAIM_WORD_OFFSET;
        final long seen = buffer.getLongVolatile(word);
        return (int)seen == SLOT_FREE
            && buffer.compareAndSetLong(word, seen, ((long)pid << Integer.SIZE) | SLOT_CLAIMED);
    }

    /** Fills a claimed slot, submits it and posts the ring record; returns the sequence used. */
    int submit(final int slot, final int op, final String key) {
        final int base = slotOffset(slot);
        final int sequence = buffer.getInt(base + SLOT_SEQUENCE_OFFSET) + 1;
        final byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
        buffer.putInt(base + SLOT_SEQUENCE_OFFSET, sequence);
        buffer.putInt(base + SLOT_OP_OFFSET, op);
        buffer.putInt(base + SLOT_REQUEST_LENGTH_OFFSET, bytes.length + 1);
        buffer.putInt(base + SLOT_ENTRY_OFFSET, ENTRY_NONE);
        buffer.putBytes(base + SLOT_PAYLOAD_OFFSET, bytes);
        buffer.putByte(base + SLOT_PAYLOAD_OFFSET + bytes.length, (byte)0);
        buffer.putIntRelease(base + SLOT_STATE_OFFSET, SLOT_SUBMITTED);
        final UnsafeBuffer record = new UnsafeBuffer(new byte[RING_REQUEST_LENGTH]);
        record.putInt(RING_REQUEST_SLOT_OFFSET, slot);
        record.putInt(RING_REQUEST_SEQUENCE_OFFSET, sequence);
        if (!ring.write(RING_MSG_OPEN_REQUEST, record, 0, RING_REQUEST_LENGTH)) {
            throw new IllegalStateException("ring full");
        }
        buffer.getAndAddInt(DOORBELL_OFFSET, 1);
        Futex.wake(buffer.addressOffset() + DOORBELL_OFFSET, 1);
        return sequence;
    }

    /** Waits (bounded) until the slot leaves SUBMITTED; returns its state then. */
    int awaitAnswer(final int slot, final long timeoutMillis) {
        final long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        final long address = buffer.addressOffset() + slotOffset(slot) + SLOT_STATE_OFFSET;
        int state;
        while ((state = state(slot)) == SLOT_SUBMITTED && System.nanoTime() < end) {
            Futex.wait(address, SLOT_SUBMITTED, Timing.WAIT_SLICE_NS);
        }
        return state;
    }

    int result(final int slot) {
        return buffer.getInt(slotOffset(slot) + SLOT_RESULT_OFFSET);
    }

    /**
     * Plays a producer that dies between claim and commit: moves the tail past a record whose length stays
     * negative, exactly what a killed client leaves behind.
     */
    void claimRecordAndDie() {
        final int capacity = ring.capacity();
        final AtomicBuffer ringBuffer = ring.buffer();
        final int tailIndex = capacity + RingBufferDescriptor.TAIL_POSITION_OFFSET;
        final int recordLength = RecordDescriptor.HEADER_LENGTH + RING_REQUEST_LENGTH;
        final long tail = ringBuffer.getLongVolatile(tailIndex);
        if (!ringBuffer.compareAndSetLong(tailIndex, tail, tail + recordLength)) {
            throw new IllegalStateException("tail moved under the test");
        }
        ringBuffer.putIntRelease((int)(tail & (capacity - 1)), -recordLength);
    }

    @Override
    public void close() {
        if (clientsFd >= 0) {
            NativeCalls.LIBC.close(clientsFd);
        }
        IoUtil.unmap(mapped);
    }
}
