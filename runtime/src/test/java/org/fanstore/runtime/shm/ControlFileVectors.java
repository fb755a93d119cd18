package org.fanstore.runtime.shm;

import static org.fanstore.runtime.shm.ControlFileDescriptor.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * Builds the golden control files in {@code tests/vectors/ctl/} (byte ranges listed in the README.md there):
 * {@code basic.ctl}, a small ctl written by {@link ControlFile} with one answered request (slot 0, its ring record
 * already consumed) and one pending request (slot 1, its record still in the ring); and
 * {@code slot-header-128.ctl}, the same bytes with a version word that carries a 128-byte slot header, which
 * every reader must refuse. The client's part (claim, request fields, ring record, doorbell) is played here the
 * way the shim does it. Deterministic: regenerating must reproduce the committed files byte for byte.
 */
final class ControlFileVectors {
    static final String BASIC = "basic.ctl";
    static final String OTHER_SLOT_HEADER = "slot-header-128.ctl";

    static final int SLOT_COUNT = 3;
    static final int SLOT_SIZE = 256;
    static final int RING_CAPACITY = 64;
    static final int SERVER_PID = 4242;
    static final long HEARTBEAT = 123_456_789_000L;
    static final long GENERATION = 0x0102030405060708L;
    /** Submit stamps (client) and the answer stamp (server), CLOCK_MONOTONIC ns. */
    static final long ANSWERED_SUBMIT_NS = 123_456_700_000L;
    static final long ANSWER_NS = 123_456_750_000L;
    static final long PENDING_SUBMIT_NS = 123_456_780_000L;

    static final int ANSWERED_SLOT = 0;
    static final int ANSWERED_PID = 5001;
    static final int ANSWERED_SEQUENCE = 3;
    static final int ANSWERED_FLAGS = 0x80000;  // O_CLOEXEC
    static final int ANSWERED_ENTRY = 12;
    static final byte[] ANSWERED_KEY = bytes("dataset/train/b.jpg");
    static final byte[] ANSWERED_PATH = bytes("/var/tmp/fanstore-cache/b.jpg");

    static final int PENDING_SLOT = 1;
    static final int PENDING_PID = 5002;
    static final int PENDING_SEQUENCE = 7;
    static final int PENDING_FLAGS = 0;  // O_RDONLY
    static final int PENDING_ENTRY = ENTRY_NONE;
    static final byte[] PENDING_KEY = bytes("dataset/a.jpg");

    /** The version word of a build whose slot header grew to 128 bytes. */
    static final int OTHER_SLOT_HEADER_VERSION =
        versionWord(FORMAT_VERSION, RING_REQUEST_LENGTH, 128, HEADER_FIELDS_LENGTH);

    private ControlFileVectors() {
    }

    /** Writes every vector file into {@code dir}, which must not hold them yet; returns the names written. */
    static List<String> writeAll(final Path dir) throws IOException {
        Files.createDirectories(dir);
        final Path basic = dir.resolve(BASIC);
        final ControlFile file = ControlFile.create(basic, SLOT_COUNT, SLOT_SIZE, RING_CAPACITY, SERVER_PID, HEARTBEAT);
        try {
            submit(file, ANSWERED_SLOT, ANSWERED_PID, ANSWERED_SEQUENCE, ANSWERED_FLAGS, ANSWERED_ENTRY, ANSWERED_KEY,
                ANSWERED_SUBMIT_NS);
            answerOne(file);
            submit(file, PENDING_SLOT, PENDING_PID, PENDING_SEQUENCE, PENDING_FLAGS, PENDING_ENTRY, PENDING_KEY,
                PENDING_SUBMIT_NS);
        } finally {
            file.unmap();
        }
        final byte[] image = Files.readAllBytes(basic);
        ByteBuffer.wrap(image).order(ByteOrder.nativeOrder()).putInt(VERSION_OFFSET, OTHER_SLOT_HEADER_VERSION);
        Files.write(dir.resolve(OTHER_SLOT_HEADER), image);
        return List.of(BASIC, OTHER_SLOT_HEADER);
    }

    /** The shim's request path: claim (one 64-bit CAS), fields, SUBMITTED, ring record, doorbell. */
    private static void submit(final ControlFile file, final int slot, final int pid, final int sequence,
        final int flags, final int entry, final byte[] key, final long submitNanos) {
        final UnsafeBuffer b = file.buffer;
        final int base = file.slotOffset(slot);
        final long claimed = ((long)pid << Integer.SIZE) | SLOT_CLAIMED;
        if (!b.compareAndSetLong(base + SLOT_CLAIM_WORD_OFFSET, SLOT_FREE, claimed)) {
            throw new IllegalStateException("slot " + slot + " not free");
        }
        b.putInt(base + SLOT_SEQUENCE_OFFSET, sequence);
        b.putInt(base + SLOT_OP_OFFSET, OP_OPEN);
        b.putInt(base + SLOT_FLAGS_OFFSET, flags);
        b.putInt(base + SLOT_RESULT_OFFSET, 0);
        b.putInt(base + SLOT_REQUEST_LENGTH_OFFSET, key.length + 1);
        b.putInt(base + SLOT_RESPONSE_LENGTH_OFFSET, 0);
        b.putInt(base + SLOT_ENTRY_OFFSET, entry);
        b.putLong(base + SLOT_GENERATION_OFFSET, GENERATION);
        b.putBytes(base + SLOT_PAYLOAD_OFFSET, key);
        b.putByte(base + SLOT_PAYLOAD_OFFSET + key.length, (byte)0);
        b.putLong(base + SLOT_ANSWER_NS_OFFSET, 0);
        b.putLong(base + SLOT_SUBMIT_NS_OFFSET, submitNanos);
        b.putIntRelease(base + SLOT_STATE_OFFSET, SLOT_SUBMITTED);
        final UnsafeBuffer record = new UnsafeBuffer(new byte[RING_REQUEST_LENGTH]);
        record.putInt(RING_REQUEST_SLOT_OFFSET, slot);
        record.putInt(RING_REQUEST_SEQUENCE_OFFSET, sequence);
        if (!file.ring.write(RING_MSG_OPEN_REQUEST, record, 0, RING_REQUEST_LENGTH)) {
            throw new IllegalStateException("ring full");
        }
        b.getAndAddInt(DOORBELL_OFFSET, 1);
    }

    /** The server's side for the first record: consume it, answer the slot it names, publish DONE. */
    private static void answerOne(final ControlFile file) {
        final int read = file.ring.read((type, buffer, index, length) -> {
            final int slot = buffer.getInt(index + RING_REQUEST_SLOT_OFFSET);
            file.putResponse(slot, 0, ANSWERED_PATH);
            file.stampAnswer(slot, ANSWER_NS);
            if (!file.casSlotState(slot, SLOT_SUBMITTED, SLOT_DONE)) {
                throw new IllegalStateException("slot " + slot + " not submitted");
            }
        }, 1);
        if (read != 1) {
            throw new IllegalStateException("no record to answer");
        }
    }

    private static byte[] bytes(final String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
