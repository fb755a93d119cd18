package org.fanstore.runtime.shm;

import static org.fanstore.runtime.timing.Timing.*;
import static org.fanstore.runtime.shm.ControlFileDescriptor.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

import org.agrona.BitUtil;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

/**
 * The mapped control file: creation (mode 0600, owner-checked), the header, typed slot accessors and the ring.
 * Only layout knowledge lives here; the protocol logic is in {@link Dispatcher} and {@link SlotSweeper}.
 */
final class ControlFile {
    /** Smallest useful slot: header plus room for a request and a response. */
    static final int MIN_SLOT_SIZE = 2 * SLOT_PAYLOAD_OFFSET;
    private static final long LOW_HALF = 0xFFFF_FFFFL;

    final Path path;
    final int slotCount;
    final int slotSize;
    final int ringCapacity;
    final long slotsOffset;
    final UnsafeBuffer buffer;
    final ManyToOneRingBuffer ring;
    private final MappedByteBuffer mapped;

    private ControlFile(final Path path, final MappedByteBuffer mapped, final int slotCount, final int slotSize,
        final int ringCapacity) {
        this.path = path;
        this.mapped = mapped;
        this.slotCount = slotCount;
        this.slotSize = slotSize;
        this.ringCapacity = ringCapacity;
        this.slotsOffset = ControlFileDescriptor.slotsOffset(ringCapacity);
        this.buffer = new UnsafeBuffer(mapped);
        this.ring = new ManyToOneRingBuffer(
            new UnsafeBuffer(buffer.addressOffset() + HEADER_SIZE, ringCapacity + RING_TRAILER_LENGTH));
    }

    /** Creates and maps a fresh control file and writes its header; the version is stored last (release). */
    static ControlFile create(final Path path, final int slotCount, final int slotSize, final int ringCapacity)
        throws IOException {
        return create(path, slotCount, slotSize, ringCapacity, (int)ProcessHandle.current().pid(), System.nanoTime());
    }

    /** As {@link #create(Path, int, int, int)} with a given server pid and first heartbeat (golden images). */
    static ControlFile create(final Path path, final int slotCount, final int slotSize, final int ringCapacity,
        final int serverPid, final long heartbeat) throws IOException {
        if (!layoutValid(slotCount, slotSize, ringCapacity)) {
            throw new IllegalArgumentException("bad layout: slots=" + slotCount + " slotSize=" + slotSize
                + " ringCapacity=" + ringCapacity);
        }
        final long length = fileLength(slotCount, slotSize, ringCapacity);
        if (length > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("control file too large: " + length);
        }
        removeStale(path);
        final MappedByteBuffer mapped;
        try (FileChannel channel = FileChannel.open(path,
            java.util.Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            channel.write(ByteBuffer.allocate(1), length - 1);  // sizes the (sparse, zeroed) file
            mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, length);
        }
        final ControlFile file = new ControlFile(path, mapped, slotCount, slotSize, ringCapacity);
        file.writeHeader(serverPid, heartbeat);
        return file;
    }

    private static boolean layoutValid(final int slotCount, final int slotSize, final int ringCapacity) {
        return slotCount > 0 && slotSize >= MIN_SLOT_SIZE && slotSize % SLOT_ALIGNMENT == 0
            && BitUtil.isPowerOfTwo(ringCapacity) && ringCapacity >= ManyToOneRingBuffer.MIN_CAPACITY;
    }

    /**
     * Maps an existing control file and checks its header as the shim's attach does: magic, then the version word
     * (a file written with other structure sizes is refused, naming both), then a layout that fits the file.
     * @throws IOException naming the file and the first fault
     */
    static ControlFile open(final Path path) throws IOException {
        final MappedByteBuffer mapped;
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            final long length = channel.size();
            if (length < HEADER_SIZE || length > Integer.MAX_VALUE) {
                throw new IOException(path + ": not a control file: length " + length);
            }
            mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, length);
        }
        final UnsafeBuffer header = new UnsafeBuffer(mapped);
        try {
            final byte[] magic = new byte[MAGIC.length()];
            header.getBytes(MAGIC_OFFSET, magic);
            if (!MAGIC.equals(new String(magic, StandardCharsets.US_ASCII))) {
                throw new IOException(path + ": not a control file: bad magic");
            }
            final int version = header.getIntVolatile(VERSION_OFFSET);
            if (version != VERSION) {
                throw new IOException(path + ": control file layout " + describeVersion(version)
                    + ", but this build uses " + describeVersion(VERSION)
                    + ": runtime and shim from different builds?");
            }
            final int slotCount = header.getInt(SLOT_COUNT_OFFSET);
            final int slotSize = header.getInt(SLOT_SIZE_OFFSET);
            final int ringCapacity = header.getInt(RING_CAPACITY_OFFSET);
            if (!layoutValid(slotCount, slotSize, ringCapacity) || header.getLong(RING_OFFSET_OFFSET) != HEADER_SIZE
                || header.getLong(SLOTS_OFFSET_OFFSET) != slotsOffset(ringCapacity)
                || fileLength(slotCount, slotSize, ringCapacity) > mapped.capacity()) {
                throw new IOException(path + ": malformed control file: slots=" + slotCount + " slotSize=" + slotSize
                    + " ringCapacity=" + ringCapacity + " length=" + mapped.capacity());
            }
            return new ControlFile(path, mapped, slotCount, slotSize, ringCapacity);
        } catch (final IOException e) {
            IoUtil.unmap(mapped);
            throw e;
        }
    }

    /**
     * A leftover file of ours from a dead server is replaced; anything else (a symlink, a foreign owner, a live
     * server's file) is refused.
     */
    private static void removeStale(final Path path) throws IOException {
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (!Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)
            || (int)Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS) != NativeCalls.LIBC.getuid()) {
            throw new FileAlreadyExistsException(path.toString(), null, "exists and is not our control file");
        }
        final byte[] header = new byte[SERVER_STATE_OFFSET + Integer.BYTES];
        final int read;
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            read = channel.read(ByteBuffer.wrap(header));
        }
        final ByteBuffer view = ByteBuffer.wrap(header).order(java.nio.ByteOrder.nativeOrder());
        if (read == header.length
            && MAGIC.equals(new String(header, MAGIC_OFFSET, MAGIC.length(), StandardCharsets.US_ASCII))
            && view.getInt(SERVER_STATE_OFFSET) == SERVER_RUNNING
            && OwnerLiveness.isAlive(view.getInt(SERVER_PID_OFFSET))) {
            throw new FileAlreadyExistsException(path.toString(), null, "in use by a live server");
        }
        Files.delete(path);
    }

    private void writeHeader(final int serverPid, final long heartbeat) {
        buffer.putBytes(MAGIC_OFFSET, MAGIC.getBytes(StandardCharsets.US_ASCII));
        buffer.putInt(SLOT_COUNT_OFFSET, slotCount);
        buffer.putInt(SLOT_SIZE_OFFSET, slotSize);
        buffer.putInt(RING_CAPACITY_OFFSET, ringCapacity);
        buffer.putLong(RING_OFFSET_OFFSET, HEADER_SIZE);
        buffer.putLong(SLOTS_OFFSET_OFFSET, slotsOffset);
        buffer.putInt(SERVER_PID_OFFSET, serverPid);
        buffer.putLong(HEARTBEAT_OFFSET, heartbeat);
        buffer.putInt(SERVER_STATE_OFFSET, SERVER_RUNNING);
        buffer.putIntRelease(VERSION_OFFSET, VERSION);
    }

    void unmap() {
        IoUtil.unmap(mapped);
    }

    /** Absolute address of a header field (for futex calls). */
    long address(final int headerOffset) {
        return buffer.addressOffset() + headerOffset;
    }

    int serverPid() {
        return buffer.getInt(SERVER_PID_OFFSET);
    }

    int serverState() {
        return buffer.getIntVolatile(SERVER_STATE_OFFSET);
    }

    long heartbeat() {
        return buffer.getLongVolatile(HEARTBEAT_OFFSET);
    }

    int slotOffset(final int slot) {
        return (int)(slotsOffset + (long)slot * slotSize);
    }

    int slotSequence(final int slot) {
        return buffer.getInt(slotOffset(slot) + SLOT_SEQUENCE_OFFSET);
    }

    int slotOp(final int slot) {
        return buffer.getInt(slotOffset(slot) + SLOT_OP_OFFSET);
    }

    /** The key length the client claims (its request length minus the NUL); not yet checked against the slot. */
    int requestKeyLength(final int slot) {
        return buffer.getInt(slotOffset(slot) + SLOT_REQUEST_LENGTH_OFFSET) - 1;
    }

    /** Copies a submitted request out of its slot; {@code keyLength} must have been checked against the slot. */
    Request readRequest(final int slot, final int keyLength, final long takenNanos) {
        final int base = slotOffset(slot);
        final byte[] key = new byte[keyLength];
        buffer.getBytes(base + SLOT_PAYLOAD_OFFSET, key);
        final long submitted = buffer.getLong(base + SLOT_SUBMIT_NS_OFFSET);
        // Both clocks are CLOCK_MONOTONIC (HeartbeatClockTest); a client without a stamp, or a wild one, gives -1.
        final long ringWait = submitted > 0 && takenNanos >= submitted
            && takenNanos - submitted < REQUEST_DEADLINE_NS ? takenNanos - submitted : -1;
        return new Request(buffer.getInt(base + SLOT_OP_OFFSET), buffer.getInt(base + SLOT_FLAGS_OFFSET),
            buffer.getInt(base + SLOT_ENTRY_OFFSET), buffer.getLong(base + SLOT_GENERATION_OFFSET), key, ringWait);
    }

    /** Stamps the answer time the client measures its wake-up from; before the state is published. */
    void stampAnswer(final int slot, final long nanos) {
        buffer.putLong(slotOffset(slot) + SLOT_ANSWER_NS_OFFSET, nanos);
    }

    /**
     * Writes an answer's result and response (path + NUL, or nothing) into a slot; a path that does not fit the
     * response area turns the answer into -ENAMETOOLONG. The state is the caller's to publish.
     */
    void putResponse(final int slot, final int result, final byte[] path) {
        final int base = slotOffset(slot);
        final int responseOffset = base + responseOffset(slotSize);
        int status = result;
        int length = 0;
        if (path != null && path.length >= maxResponseLength(slotSize)) {
            status = -Errno.ENAMETOOLONG;
        } else if (path != null) {
            buffer.putBytes(responseOffset, path);
            buffer.putByte(responseOffset + path.length, (byte)0);
            length = path.length;
        }
        buffer.putInt(base + SLOT_RESPONSE_LENGTH_OFFSET, length);
        buffer.putInt(base + SLOT_RESULT_OFFSET, status);
    }

    int result(final int slot) {
        return buffer.getInt(slotOffset(slot) + SLOT_RESULT_OFFSET);
    }

    /** The response payload of an answered slot, without its NUL. */
    byte[] response(final int slot) {
        final int base = slotOffset(slot);
        final byte[] path = new byte[buffer.getInt(base + SLOT_RESPONSE_LENGTH_OFFSET)];
        buffer.getBytes(base + responseOffset(slotSize), path);
        return path;
    }

    long slotStateAddress(final int slot) {
        return buffer.addressOffset() + slotOffset(slot) + SLOT_STATE_OFFSET;
    }

    int slotState(final int slot) {
        return buffer.getIntVolatile(slotOffset(slot) + SLOT_STATE_OFFSET);
    }

    boolean casSlotState(final int slot, final int expected, final int update) {
        return buffer.compareAndSetInt(slotOffset(slot) + SLOT_STATE_OFFSET, expected, update);
    }

    long claimWord(final int slot) {
        return buffer.getLongVolatile(slotOffset(slot) + SLOT_CLAIM_WORD_OFFSET);
    }

    /** Frees a slot only if its claim word (state and owner) is still exactly {@code seen}. */
    boolean freeIfUnchanged(final int slot, final long seen) {
        final long free = (seen & ~LOW_HALF) | SLOT_FREE;
        return buffer.compareAndSetLong(slotOffset(slot) + SLOT_CLAIM_WORD_OFFSET, seen, free);
    }

    static int stateOf(final long claimWord) {
        return (int)claimWord;
    }

    static int ownerOf(final long claimWord) {
        return (int)(claimWord >>> Integer.SIZE);
    }
}
