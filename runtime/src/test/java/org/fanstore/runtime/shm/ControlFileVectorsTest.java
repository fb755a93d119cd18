package org.fanstore.runtime.shm;

import static org.fanstore.runtime.shm.ControlFileDescriptor.*;
import static org.fanstore.runtime.shm.ControlFileVectors.*;
import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.ringbuffer.RecordDescriptor;
import org.agrona.concurrent.ringbuffer.RingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.fanstore.prep.format.TestVectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The golden control files in tests/vectors/ctl (which interpose-native/tests/test_ctl_layout.c parses with the
 * structs of wire_layout.h): {@link ControlFile} still writes them byte for byte, reads every field back, and
 * refuses a file whose version word carries other structure sizes.
 * Run with -Dfanstore.regenerateVectors=true to rewrite the committed files after a deliberate format change.
 */
class ControlFileVectorsTest {
    static Path vectorDir() {
        return TestVectors.dir("ctl");
    }

    @Test
    void writerReproducesCommittedVectors(@TempDir final Path temp) throws IOException {
        TestVectors.assertReproduced(vectorDir(), temp, ControlFileVectors.writeAll(temp), "layout drift");
    }

    @Test
    void readerParsesEveryField(@TempDir final Path temp) throws IOException {
        final Path copy = Files.copy(vectorDir().resolve(BASIC), temp.resolve(BASIC));
        final ControlFile file = ControlFile.open(copy);
        try {
            assertEquals(SLOT_COUNT, file.slotCount);
            assertEquals(SLOT_SIZE, file.slotSize);
            assertEquals(RING_CAPACITY, file.ringCapacity);
            assertEquals(8192, file.slotsOffset);
            assertEquals(8192 + SLOT_COUNT * SLOT_SIZE, Files.size(copy));
            assertEquals(SERVER_PID, file.serverPid());
            assertEquals(SERVER_RUNNING, file.serverState());
            assertEquals(HEARTBEAT, file.heartbeat());
            assertEquals(2, file.buffer.getInt(DOORBELL_OFFSET), "one doorbell ring per record");

            assertEquals(SLOT_DONE, file.slotState(ANSWERED_SLOT));
            assertEquals(ANSWERED_PID, ControlFile.ownerOf(file.claimWord(ANSWERED_SLOT)));
            assertEquals(ANSWERED_SEQUENCE, file.slotSequence(ANSWERED_SLOT));
            assertRequest(file, ANSWERED_SLOT, ANSWERED_FLAGS, ANSWERED_ENTRY, ANSWERED_KEY);
            assertEquals(0, file.result(ANSWERED_SLOT));
            assertArrayEquals(ANSWERED_PATH, file.response(ANSWERED_SLOT));

            assertEquals(SLOT_SUBMITTED, file.slotState(PENDING_SLOT));
            assertEquals(PENDING_PID, ControlFile.ownerOf(file.claimWord(PENDING_SLOT)));
            assertEquals(PENDING_SEQUENCE, file.slotSequence(PENDING_SLOT));
            assertRequest(file, PENDING_SLOT, PENDING_FLAGS, PENDING_ENTRY, PENDING_KEY);
            // ring_wait: the dispatcher's take time minus the client's stamp; a stamp in the future counts as none
            assertEquals(5_000L, file.readRequest(PENDING_SLOT, PENDING_KEY.length, PENDING_SUBMIT_NS + 5_000L)
                .ringWaitNanos());
            assertEquals(-1L, file.readRequest(PENDING_SLOT, PENDING_KEY.length, PENDING_SUBMIT_NS - 1)
                .ringWaitNanos());
            final int answered = file.slotOffset(ANSWERED_SLOT);
            assertEquals(ANSWERED_SUBMIT_NS, file.buffer.getLong(answered + SLOT_SUBMIT_NS_OFFSET));
            assertEquals(ANSWER_NS, file.buffer.getLong(answered + SLOT_ANSWER_NS_OFFSET));
            assertEquals(0L, file.buffer.getLong(file.slotOffset(PENDING_SLOT) + SLOT_ANSWER_NS_OFFSET));

            assertEquals(0L, file.claimWord(2), "slot 2 never claimed");
            assertEquals(0, file.slotSequence(2));

            // The first record (slot 0) was consumed; the second (slot 1) waits at index 16.
            assertEquals(16, file.ring.consumerPosition());
            assertEquals(32, file.ring.producerPosition());
            final List<int[]> records = new ArrayList<>();
            file.ring.read((type, buffer, index, length) -> records.add(new int[]{type, length,
                buffer.getInt(index + RING_REQUEST_SLOT_OFFSET), buffer.getInt(index + RING_REQUEST_SEQUENCE_OFFSET)}));
            assertEquals(1, records.size());
            assertArrayEquals(new int[]{RING_MSG_OPEN_REQUEST, RING_REQUEST_LENGTH, PENDING_SLOT, PENDING_SEQUENCE},
                records.get(0));
        } finally {
            file.unmap();
        }
    }

    private static void assertRequest(final ControlFile file, final int slot, final int flags, final int entry,
        final byte[] key) {
        assertEquals(OP_OPEN, file.slotOp(slot));
        assertEquals(key.length, file.requestKeyLength(slot));
        final Request request = file.readRequest(slot, file.requestKeyLength(slot), 0);
        assertEquals(OP_OPEN, request.op());
        assertEquals(flags, request.flags());
        assertEquals(entry, request.entryIndex());
        assertArrayEquals(key, request.key());
    }

    @Test
    void otherStructureSizesAreRefusedNamingBoth(@TempDir final Path temp) throws IOException {
        final Path copy = Files.copy(vectorDir().resolve(OTHER_SLOT_HEADER), temp.resolve(OTHER_SLOT_HEADER));
        final IOException e = assertThrows(IOException.class, () -> ControlFile.open(copy).unmap());
        assertTrue(e.getMessage().startsWith(copy.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("slot header 128 bytes"), e.getMessage());
        assertTrue(e.getMessage().contains("this build uses " + describeVersion(VERSION)), e.getMessage());

        // The version word alone tells the builds apart: the rest of the file is basic.ctl, byte for byte.
        final byte[] other = Files.readAllBytes(copy);
        ByteBuffer.wrap(other).order(ByteOrder.nativeOrder()).putInt(VERSION_OFFSET, VERSION);
        assertArrayEquals(Files.readAllBytes(vectorDir().resolve(BASIC)), other);
    }

    @Test
    void formatOneWithoutSizesIsRefused(@TempDir final Path temp) throws IOException {
        final byte[] image = Files.readAllBytes(vectorDir().resolve(BASIC));
        ByteBuffer.wrap(image).order(ByteOrder.nativeOrder()).putInt(VERSION_OFFSET, 1);
        final Path old = Files.write(temp.resolve("old.ctl"), image);
        final IOException e = assertThrows(IOException.class, () -> ControlFile.open(old).unmap());
        assertTrue(e.getMessage().contains("0x00000001"), e.getMessage());
    }

    @Test
    void versionWordFoldsTheStructureSizes() {
        assertEquals(0x03084040, VERSION);
        assertEquals(SLOT_PAYLOAD_OFFSET, SLOT_HEADER_LENGTH);
        assertEquals(HEADER_RESERVED_OFFSET + Integer.BYTES, HEADER_FIELDS_LENGTH);
    }

    /** The ring part of the layout is Agrona's; the descriptor's copy of it must not drift from the library. */
    @Test
    void ringLayoutIsAgronas() {
        assertEquals(RingBufferDescriptor.TRAILER_LENGTH, RING_TRAILER_LENGTH);
        assertEquals(RingBufferDescriptor.TAIL_POSITION_OFFSET, RING_TAIL_POSITION_OFFSET);
        assertEquals(RingBufferDescriptor.HEAD_CACHE_POSITION_OFFSET, RING_HEAD_CACHE_POSITION_OFFSET);
        assertEquals(RingBufferDescriptor.HEAD_POSITION_OFFSET, RING_HEAD_POSITION_OFFSET);
        assertEquals(RecordDescriptor.HEADER_LENGTH, RING_RECORD_HEADER_LENGTH);
        assertEquals(RecordDescriptor.ALIGNMENT, RING_RECORD_ALIGNMENT);
        assertNotEquals(RingBuffer.PADDING_MSG_TYPE_ID, RING_MSG_OPEN_REQUEST);
    }
}
