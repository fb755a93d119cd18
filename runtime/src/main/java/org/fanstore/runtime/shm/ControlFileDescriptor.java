package org.fanstore.runtime.shm;

/**
 * Byte offsets and constants of the control file {@code ctl} (request ring + response slots).
 * Specification: README.md in this package; C twin: interpose-native/src/wire_layout.h (the same layout as
 * structs); golden image both sides parse: tests/vectors/ctl/.
 * All integers are native-endian; the claim word of a slot assumes little-endian (x86-64, aarch64).
 */
public final class ControlFileDescriptor {
    /** Magic at offset 0, ASCII. */
    public static final String MAGIC = "FANSCTL1";
    /**
     * Protocol format number, the top byte of {@link #VERSION}. 3: a client holds a lock on byte &lt;slot&gt; of
     * {@code <ctl>.clients} while it owns the slot (README, "Liveness"); 2 had the sweeper read /proc/&lt;pid&gt;.
     */
    public static final int FORMAT_VERSION = 3;
    /** Bytes of header fields (C: {@code sizeof(fs_ctl_header)}); the rest of the header page is zero. */
    public static final int HEADER_FIELDS_LENGTH = 64;
    /** Bytes of a slot's fixed fields (C: {@code sizeof(fs_slot_header)}); the payload follows. */
    public static final int SLOT_HEADER_LENGTH = 64;
    /** Payload of a ring record (C: {@code sizeof(fs_ring_request)}): u32 slot index, u32 slot sequence. */
    public static final int RING_REQUEST_LENGTH = 8;
    /**
     * The version word: the format number and the size of every structure both sides must agree on, one byte
     * each, so a runtime and a shim built with different structures refuse each other at attach:
     * {@code FORMAT_VERSION << 24 | RING_REQUEST_LENGTH << 16 | SLOT_HEADER_LENGTH << 8 | HEADER_FIELDS_LENGTH}.
     */
    public static final int VERSION = versionWord(FORMAT_VERSION, RING_REQUEST_LENGTH, SLOT_HEADER_LENGTH,
        HEADER_FIELDS_LENGTH);
    /** Header page size; the ring starts here. */
    public static final int HEADER_SIZE = 4096;

    /** 8 bytes: magic. */
    public static final int MAGIC_OFFSET = 0;
    /** 4 bytes: the version word {@link #VERSION}, stored last (release): a client never sees a half-written header. */
    public static final int VERSION_OFFSET = 8;
    /** 4 bytes: slot count S. */
    public static final int SLOT_COUNT_OFFSET = 12;
    /** 4 bytes: slot size Z, a multiple of {@link #SLOT_ALIGNMENT}. */
    public static final int SLOT_SIZE_OFFSET = 16;
    /** 4 bytes: ring capacity C, a power of two. */
    public static final int RING_CAPACITY_OFFSET = 20;
    /** 8 bytes: offset of the ring (always {@link #HEADER_SIZE}). */
    public static final int RING_OFFSET_OFFSET = 24;
    /** 8 bytes: offset of slot 0 (ring offset + C + ring trailer, rounded up to 4096). */
    public static final int SLOTS_OFFSET_OFFSET = 32;
    /** 4 bytes: server pid. */
    public static final int SERVER_PID_OFFSET = 40;
    /** 4 bytes: server state, {@link #SERVER_RUNNING} or {@link #SERVER_STOPPING}. */
    public static final int SERVER_STATE_OFFSET = 44;
    /** 8 bytes: server heartbeat, CLOCK_MONOTONIC nanoseconds. */
    public static final int HEARTBEAT_OFFSET = 48;
    /** 4 bytes: doorbell futex word; clients add 1 and wake it after each ring record. */
    public static final int DOORBELL_OFFSET = 56;
    /** 4 bytes: reserved, zero; the header fields end after it. */
    public static final int HEADER_RESERVED_OFFSET = 60;

    /** Server state: serving. */
    public static final int SERVER_RUNNING = 1;
    /** Server state: shutting down; clients fail new and waiting requests with EIO. */
    public static final int SERVER_STOPPING = 2;

    /** Agrona ring trailer length (tail, head cache, head, correlation, heartbeat, each padded to 128). */
    public static final int RING_TRAILER_LENGTH = 768;
    /** 8 bytes in the trailer (after the ring's capacity): tail position, producers claim by CAS. */
    public static final int RING_TAIL_POSITION_OFFSET = 128;
    /** 8 bytes in the trailer: producers' cached copy of the head position. */
    public static final int RING_HEAD_CACHE_POSITION_OFFSET = 256;
    /** 8 bytes in the trailer: head position, the consumer's. */
    public static final int RING_HEAD_POSITION_OFFSET = 384;
    /** Ring record header: i32 length (header + payload; negative while written), i32 type. */
    public static final int RING_RECORD_HEADER_LENGTH = 8;
    /** Ring records start at multiples of this. */
    public static final int RING_RECORD_ALIGNMENT = 8;
    /** Ring record type of an OPEN request. */
    public static final int RING_MSG_OPEN_REQUEST = 1;
    /** Offset of the slot index inside a ring record's payload. */
    public static final int RING_REQUEST_SLOT_OFFSET = 0;
    /** Offset of the slot sequence inside a ring record's payload. */
    public static final int RING_REQUEST_SEQUENCE_OFFSET = 4;

    /** Slot sizes are multiples of this. */
    public static final int SLOT_ALIGNMENT = 64;
    /** 8 bytes: claim word = state (low half) + owner pid (high half), claimed with one 64-bit CAS. */
    public static final int SLOT_CLAIM_WORD_OFFSET = 0;
    /** 4 bytes: slot state, the futex word the client waits on. */
    public static final int SLOT_STATE_OFFSET = 0;
    /** 4 bytes: pid of the claiming process. */
    public static final int SLOT_OWNER_PID_OFFSET = 4;
    /** 4 bytes: sequence, incremented by the client on every claim. */
    public static final int SLOT_SEQUENCE_OFFSET = 8;
    /** 4 bytes: operation, {@link #OP_OPEN}. */
    public static final int SLOT_OP_OFFSET = 12;
    /** 4 bytes: request flags (the open(2) flags). */
    public static final int SLOT_FLAGS_OFFSET = 16;
    /** 4 bytes: result, >= 0 success, < 0 a negative errno. */
    public static final int SLOT_RESULT_OFFSET = 20;
    /** 4 bytes: request payload length (including the NUL). */
    public static final int SLOT_REQUEST_LENGTH_OFFSET = 24;
    /** 4 bytes: response payload length (excluding the NUL). */
    public static final int SLOT_RESPONSE_LENGTH_OFFSET = 28;
    /** 4 bytes: entry index the client resolved, {@link #ENTRY_NONE} if none. */
    public static final int SLOT_ENTRY_OFFSET = 32;
    /** 8 bytes: table generation the client used. */
    public static final int SLOT_GENERATION_OFFSET = 40;
    /** 8 bytes: CLOCK_MONOTONIC ns the client stamped right before SUBMITTED (statistics only; 0: none). */
    public static final int SLOT_SUBMIT_NS_OFFSET = 48;
    /** 8 bytes: CLOCK_MONOTONIC ns the server stamped right before DONE (the client counts its wake-up from it). */
    public static final int SLOT_ANSWER_NS_OFFSET = 56;
    /** Request payload starts here; the response payload starts halfway through the rest of the slot. */
    public static final int SLOT_PAYLOAD_OFFSET = SLOT_HEADER_LENGTH;

    /** Slot state: free to claim. */
    public static final int SLOT_FREE = 0;
    /** Slot state: claimed, the client is writing the request. */
    public static final int SLOT_CLAIMED = 1;
    /** Slot state: request complete, waiting for the server. */
    public static final int SLOT_SUBMITTED = 2;
    /** Slot state: answered, the client copies the response and stores FREE. */
    public static final int SLOT_DONE = 3;
    /** Slot state: the client gave up; whoever sees it next (server answer, sweeper) frees it. */
    public static final int SLOT_ABANDONED = 4;

    /** Operation: materialise an entry for opening (entry NONE: a committed output file). */
    public static final int OP_OPEN = 1;
    // Codes 2, 3 and 4 (CREATE, RELEASE, HOLD of the staging design) stay reserved: the runtime answers EINVAL.
    /** Operation: remove an output file. */
    public static final int OP_UNLINK = 5;
    /** Operation: rename an output (payload: key, NUL, target, NUL). */
    public static final int OP_RENAME = 6;
    /** Operation: make an output directory (entry: mode). */
    public static final int OP_MKDIR = 7;
    /** Operation: remove an empty output directory. */
    public static final int OP_RMDIR = 8;
    /** Operation: publish {@code upper/<key>} (a regular file) to the other ranks; result: the commit's errno. */
    public static final int OP_PUBLISH = 9;
    /** Entry index meaning "the client resolved none". */
    public static final int ENTRY_NONE = 0xFFFFFFFF;

    private ControlFileDescriptor() {
    }

    /** Folds a format number and three structure sizes (each below 256) into a version word. */
    static int versionWord(final int format, final int size2, final int size1, final int size0) {
        return format << 24 | size2 << 16 | size1 << 8 | size0;
    }

    /** A version word spelled out, for error messages. */
    public static String describeVersion(final int version) {
        return String.format("0x%08x (format %d, ring request %d bytes, slot header %d bytes, header %d bytes)",
            version, version >>> 24, version >>> 16 & 0xff, version >>> 8 & 0xff, version & 0xff);
    }

    /** Offset of the response payload inside a slot of the given size. */
    public static int responseOffset(final int slotSize) {
        return SLOT_PAYLOAD_OFFSET + (slotSize - SLOT_PAYLOAD_OFFSET) / 2;
    }

    /** Largest request payload (key + NUL) a slot of the given size holds. */
    public static int maxRequestLength(final int slotSize) {
        return responseOffset(slotSize) - SLOT_PAYLOAD_OFFSET;
    }

    /** Largest response payload (path + NUL) a slot of the given size holds. */
    public static int maxResponseLength(final int slotSize) {
        return slotSize - responseOffset(slotSize);
    }

    /** Offset of slot 0 for a ring of the given capacity. */
    public static long slotsOffset(final int ringCapacity) {
        final long end = HEADER_SIZE + (long)ringCapacity + RING_TRAILER_LENGTH;
        return (end + HEADER_SIZE - 1) / HEADER_SIZE * HEADER_SIZE;
    }

    /** Total file length. */
    public static long fileLength(final int slotCount, final int slotSize, final int ringCapacity) {
        return slotsOffset(ringCapacity) + (long)slotCount * slotSize;
    }
}
