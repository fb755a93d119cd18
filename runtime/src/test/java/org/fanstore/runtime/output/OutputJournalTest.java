package org.fanstore.runtime.output;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.fanstore.prep.format.TestVectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The output journal's bytes: the writer reproduces tests/vectors/outputs/basic.journal (which
 * interpose-native/tests/test_output_journal.c parses with the shim's reader), and every field lands where
 * OutputJournalDescriptor says.
 */
class OutputJournalTest {
    static final long MTIME = 1_700_000_000_123_456_789L;
    static final String UPPER = "/local/fanstore-0-job/rank-1/upper";

    @TempDir
    Path dir;

    /** The golden journal: what its README lists. */
    static void writeBasic(Path file) throws Exception {
        try (OutputJournal j = OutputJournal.create(file, 1, Path.of(UPPER), 8192)) {
            assertTrue(j.append(new OutputRecord(OutputRecord.Kind.DIR, key("out"), null, 0, 040755, MTIME, -1, 0,
                    true)));
            assertTrue(j.append(new OutputRecord(OutputRecord.Kind.FILE, key("out/a.pt"), null, 12345, 0100644,
                    MTIME, 1, 7, false)));
            assertTrue(j.append(new OutputRecord(OutputRecord.Kind.RENAME, key("out/a.pt"), key("out/b.pt"), 0, 0,
                    MTIME, -1, 0, false)));
            assertTrue(j.append(new OutputRecord(OutputRecord.Kind.UNLINK, key("out/b.pt"), null, 0, 0, MTIME, -1, 0,
                    false)));
        }
    }

    static byte[] key(String s) {
        return s.getBytes(UTF_8);
    }

    @Test
    void writerReproducesTheGoldenJournal() throws Exception {
        writeBasic(dir.resolve("basic.journal"));
        TestVectors.assertReproduced(TestVectors.dir("outputs"), dir, List.of("basic.journal"),
                "did the journal layout change (then bump OutputJournalDescriptor.FORMAT and the C twin)");
    }

    @Test
    void fieldsLieWhereTheDescriptorSays() throws Exception {
        Path file = dir.resolve("j");
        writeBasic(file);
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.nativeOrder());
        assertEquals(8192, b.capacity());
        assertEquals(0x02000030, b.getInt(OutputJournalDescriptor.VERSION_OFFSET));
        assertEquals(1, b.getInt(OutputJournalDescriptor.RANK_OFFSET));
        assertEquals(UPPER.length(), b.getInt(OutputJournalDescriptor.UPPER_LENGTH_OFFSET));
        int at = OutputJournalDescriptor.HEADER_LENGTH;
        assertEquals(56, b.getInt(at));                        // DIR "out": 48 + 3, padded to 56
        at += 56;
        assertEquals(1, b.getShort(at + OutputJournalDescriptor.RECORD_KIND_OFFSET));
        assertEquals(12345, b.getLong(at + OutputJournalDescriptor.RECORD_SIZE_OFFSET));
        assertEquals(7, b.getLong(at + OutputJournalDescriptor.RECORD_OBJECT_ID_OFFSET));
        assertEquals(MTIME, b.getLong(at + OutputJournalDescriptor.RECORD_MTIME_OFFSET));
        at += b.getInt(at);
        assertEquals(5, b.getShort(at + OutputJournalDescriptor.RECORD_KIND_OFFSET));
        assertEquals("out/a.ptout/b.pt", new String(b.array(), at + 48, 16, UTF_8));
        at += b.getInt(at);
        at += b.getInt(at);
        assertEquals(at, b.getLong(OutputJournalDescriptor.PUBLISHED_OFFSET));
    }

    @Test
    void aFullJournalRefusesTheRecordAndPublishesNothing() throws Exception {
        Path file = dir.resolve("small");
        try (OutputJournal j = OutputJournal.create(file, 0, Path.of("/s"), 8192)) {
            byte[] longKey = "k".repeat(4000).getBytes(UTF_8);
            assertTrue(j.append(new OutputRecord(OutputRecord.Kind.DIR, longKey, null, 0, 040755, 0, -1, 0, true)));
            assertFalse(j.fits(longKey.length, 0));
            assertFalse(j.append(new OutputRecord(OutputRecord.Kind.DIR, longKey, null, 0, 040755, 0, -1, 0, true)));
        }
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.nativeOrder());
        assertEquals(4096 + OutputJournalDescriptor.recordLength(4000, 0),
                b.getLong(OutputJournalDescriptor.PUBLISHED_OFFSET));
    }
}
