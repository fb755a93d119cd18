package org.fanstore.runtime.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.agrona.concurrent.ringbuffer.RecordDescriptor;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.junit.jupiter.api.Test;

/** The C header wire_layout.h, ControlFileDescriptor and Agrona's ring layout say the same numbers. */
class WireLayoutTest
{
    private static final Pattern DEFINE = Pattern.compile("#define\\s+(FS_\\w+)\\s+\\(?(-?(?:0x)?[0-9A-Fa-f]+)[uUlL]*\\)?");

    private static Map<String, Long> cDefines() throws Exception
    {
        final String header = Files.readString(ShmTestSupport.repoRoot().resolve("interpose-native/src/wire_layout.h"));
        final Map<String, Long> defines = new HashMap<>();
        final Matcher m = DEFINE.matcher(header);
        while (m.find())
        {
            defines.put(m.group(1), Long.decode(m.group(2)));
        }
        return defines;
    }

    @Test
    void cHeaderMatchesJavaDescriptor() throws Exception
    {
        final Map<String, Long> c = cDefines();
        final Object[][] pairs = {
            {"FS_CTL_VERSION", ControlFileDescriptor.VERSION},
            {"FS_CTL_HEADER_SIZE", ControlFileDescriptor.HEADER_SIZE},
            {"FS_CTL_SLOT_COUNT_OFF", ControlFileDescriptor.SLOT_COUNT_OFFSET},
            {"FS_CTL_SLOT_SIZE_OFF", ControlFileDescriptor.SLOT_SIZE_OFFSET},
            {"FS_CTL_RING_CAPACITY_OFF", ControlFileDescriptor.RING_CAPACITY_OFFSET},
            {"FS_CTL_RING_OFFSET_OFF", ControlFileDescriptor.RING_OFFSET_OFFSET},
            {"FS_CTL_SLOTS_OFFSET_OFF", ControlFileDescriptor.SLOTS_OFFSET_OFFSET},
            {"FS_CTL_SERVER_PID_OFF", ControlFileDescriptor.SERVER_PID_OFFSET},
            {"FS_CTL_SERVER_STATE_OFF", ControlFileDescriptor.SERVER_STATE_OFFSET},
            {"FS_CTL_HEARTBEAT_OFF", ControlFileDescriptor.HEARTBEAT_OFFSET},
            {"FS_CTL_DOORBELL_OFF", ControlFileDescriptor.DOORBELL_OFFSET},
            {"FS_SERVER_RUNNING", ControlFileDescriptor.SERVER_RUNNING},
            {"FS_SERVER_STOPPING", ControlFileDescriptor.SERVER_STOPPING},
            {"FS_RING_TRAILER_LENGTH", ControlFileDescriptor.RING_TRAILER_LENGTH},
            {"FS_RING_MSG_OPEN_REQUEST", ControlFileDescriptor.RING_MSG_OPEN_REQUEST},
            {"FS_RING_REQUEST_LENGTH", ControlFileDescriptor.RING_REQUEST_LENGTH},
            {"FS_SLOT_ALIGNMENT", ControlFileDescriptor.SLOT_ALIGNMENT},
            {"FS_SLOT_CLAIM_WORD_OFF", ControlFileDescriptor.SLOT_CLAIM_WORD_OFFSET},
            {"FS_SLOT_STATE_OFF", ControlFileDescriptor.SLOT_STATE_OFFSET},
            {"FS_SLOT_OWNER_PID_OFF", ControlFileDescriptor.SLOT_OWNER_PID_OFFSET},
            {"FS_SLOT_SEQUENCE_OFF", ControlFileDescriptor.SLOT_SEQUENCE_OFFSET},
            {"FS_SLOT_OP_OFF", ControlFileDescriptor.SLOT_OP_OFFSET},
            {"FS_SLOT_FLAGS_OFF", ControlFileDescriptor.SLOT_FLAGS_OFFSET},
            {"FS_SLOT_RESULT_OFF", ControlFileDescriptor.SLOT_RESULT_OFFSET},
            {"FS_SLOT_REQ_LEN_OFF", ControlFileDescriptor.SLOT_REQUEST_LENGTH_OFFSET},
            {"FS_SLOT_RESP_LEN_OFF", ControlFileDescriptor.SLOT_RESPONSE_LENGTH_OFFSET},
            {"FS_SLOT_ENTRY_OFF", ControlFileDescriptor.SLOT_ENTRY_OFFSET},
            {"FS_SLOT_GENERATION_OFF", ControlFileDescriptor.SLOT_GENERATION_OFFSET},
            {"FS_SLOT_PAYLOAD_OFF", ControlFileDescriptor.SLOT_PAYLOAD_OFFSET},
            {"FS_SLOT_FREE", ControlFileDescriptor.SLOT_FREE},
            {"FS_SLOT_CLAIMED", ControlFileDescriptor.SLOT_CLAIMED},
            {"FS_SLOT_SUBMITTED", ControlFileDescriptor.SLOT_SUBMITTED},
            {"FS_SLOT_DONE", ControlFileDescriptor.SLOT_DONE},
            {"FS_SLOT_ABANDONED", ControlFileDescriptor.SLOT_ABANDONED},
            {"FS_OP_OPEN", ControlFileDescriptor.OP_OPEN},
            {"FS_ENTRY_NONE", ControlFileDescriptor.ENTRY_NONE & 0xFFFF_FFFFL},
            {"FS_HEARTBEAT_STALE_NS", ControlFileDescriptor.HEARTBEAT_STALE_NS},
            {"FS_REQUEST_DEADLINE_NS", ControlFileDescriptor.REQUEST_DEADLINE_NS},
            {"FS_WAIT_SLICE_NS", ControlFileDescriptor.WAIT_SLICE_NS},
        };
        for (final Object[] pair : pairs)
        {
            assertTrue(c.containsKey((String)pair[0]), pair[0] + " missing from wire_layout.h");
            assertEquals(((Number)pair[1]).longValue(), c.get((String)pair[0]), (String)pair[0]);
        }
    }

    @Test
    void ringConstantsMatchAgrona() throws Exception
    {
        final Map<String, Long> c = cDefines();
        assertEquals(RingBufferDescriptor.TRAILER_LENGTH, ControlFileDescriptor.RING_TRAILER_LENGTH);
        assertEquals(RingBufferDescriptor.TAIL_POSITION_OFFSET, c.get("FS_RING_TAIL_OFF"));
        assertEquals(RingBufferDescriptor.HEAD_CACHE_POSITION_OFFSET, c.get("FS_RING_HEAD_CACHE_OFF"));
        assertEquals(RingBufferDescriptor.HEAD_POSITION_OFFSET, c.get("FS_RING_HEAD_OFF"));
        assertEquals(RecordDescriptor.HEADER_LENGTH, c.get("FS_RING_RECORD_HEADER"));
        assertEquals(RecordDescriptor.ALIGNMENT, c.get("FS_RING_ALIGNMENT"));
        assertEquals(org.agrona.concurrent.ringbuffer.RingBuffer.PADDING_MSG_TYPE_ID, c.get("FS_RING_PADDING_TYPE"));
    }
}
