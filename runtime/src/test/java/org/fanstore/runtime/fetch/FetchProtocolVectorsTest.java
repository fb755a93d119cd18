package org.fanstore.runtime.fetch;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.fanstore.prep.format.TestVectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.fanstore.runtime.membership.JobSecret;
import org.fanstore.runtime.world.MpiTags;

/**
 * The remote-fetch wire format against its golden vectors, tests/vectors/fetch/ (values in its README.md; the C twin
 * is interpose-native/tests/test_fetch_vectors.c): {@link FetchProtocol#encode} and {@link FetchProtocol#putHeader}
 * reproduce them byte for byte, the readers find the documented values, and the status codes equal the spec's table
 * (this package's README.md, "Remote fetch: wire format").
 */
class FetchProtocolVectorsTest {
    /** The test secret: bytes 0xA0, 0xA1, ..., 0xBF. */
    static final byte[] SECRET = secretBytes(0xA0);
    static final int REQUESTER = 3;
    static final int REPLY_TAG = MpiTags.reply(5);
    static final int CHUNK_BYTES = 520192;
    static final long ID = 0x0102030405060708L;
    static final long POSITION = 0x0000001122334455L;
    static final long LENGTH = 0x0000000000A0B0C0L;
    static final long OBJECT_LENGTH_OK = 0x0000000123456789L;
    static final long OBJECT_LENGTH_BAD_RANGE = 0x0000000000ABCDEFL;
    static final long OBJECT_LENGTH_FILLING = 0x0000000007F0F000L;

    static final List<String> REQUESTS = List.of("request-fetch.bin", "request-fetch-whole.bin",
            "request-fetch-for-reader.bin", "request-shutdown.bin");
    static final List<String> HEADERS = List.of("reply-header-ok.bin", "reply-header-not-held.bin",
            "reply-header-bad-range.bin", "reply-header-unauthorized.bin", "reply-header-not-held-filling.bin");

    @TempDir
    Path dir;

    static byte[] secretBytes(int first) {
        byte[] b = new byte[JobSecret.BYTES];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (first + i);
        }
        return b;
    }

    static FetchProtocol.Request fetch(int kind) {
        return new FetchProtocol.Request(kind, REQUESTER, REPLY_TAG, CHUNK_BYTES, ID, POSITION, LENGTH);
    }

    /** As FetchDispatcher.tell sends it: the sender's rank, every other field zero. */
    static FetchProtocol.Request shutdown() {
        return new FetchProtocol.Request(FetchProtocol.KIND_SHUTDOWN, REQUESTER, 0, 0, 0, 0, 0);
    }

    /**
     * A header as the owner writes it: at an offset inside a larger little-endian buffer full of other bytes (putHeader
     * must write big-endian, the zero word included, whatever the buffer holds or its order), then cut out.
     */
    static byte[] header(int status, long objectLength, long replyLength) {
        ByteBuffer message = ByteBuffer.allocateDirect(64).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < message.capacity(); i++) {
            message.put(i, (byte) 0x5A);
        }
        FetchProtocol.putHeader(message, 16, status, objectLength, replyLength);
        byte[] bytes = new byte[FetchProtocol.REPLY_HEADER_BYTES];
        message.get(16, bytes);
        assertEquals(0x5A, message.get(15));
        assertEquals(0x5A, message.get(16 + FetchProtocol.REPLY_HEADER_BYTES));
        return bytes;
    }

    /** The golden files: what tests/vectors/fetch/README.md lists. */
    static void writeAll(Path to) throws Exception {
        JobSecret secret = JobSecret.of(SECRET);
        Files.write(to.resolve("request-fetch.bin"), FetchProtocol.encode(fetch(FetchProtocol.KIND_FETCH), secret));
        Files.write(to.resolve("request-fetch-whole.bin"),
                FetchProtocol.encode(fetch(FetchProtocol.KIND_FETCH_WHOLE), secret));
        Files.write(to.resolve("request-fetch-for-reader.bin"),
                FetchProtocol.encode(fetch(FetchProtocol.KIND_FETCH_FOR_READER), secret));
        Files.write(to.resolve("request-shutdown.bin"), FetchProtocol.encode(shutdown(), secret));
        Files.write(to.resolve("reply-header-ok.bin"), header(FetchProtocol.STATUS_OK, OBJECT_LENGTH_OK, LENGTH));
        Files.write(to.resolve("reply-header-not-held.bin"),
                header(FetchProtocol.statusOf(RemoteFetchException.Reason.NOT_HELD), -1, 0));
        Files.write(to.resolve("reply-header-bad-range.bin"),
                header(FetchProtocol.statusOf(RemoteFetchException.Reason.BAD_RANGE), OBJECT_LENGTH_BAD_RANGE, 0));
        Files.write(to.resolve("reply-header-unauthorized.bin"),
                header(FetchProtocol.statusOf(RemoteFetchException.Reason.UNAUTHORIZED), -1, 0));
        Files.write(to.resolve("reply-header-not-held-filling.bin"),
                header(FetchProtocol.statusOf(RemoteFetchException.Reason.NOT_HELD), OBJECT_LENGTH_FILLING, 0));
    }

    static byte[] golden(String name) throws Exception {
        return Files.readAllBytes(TestVectors.dir("fetch").resolve(name));
    }

    @Test
    void writersReproduceTheGoldenVectors() throws Exception {
        writeAll(dir);
        List<String> all = new ArrayList<>(REQUESTS);
        all.addAll(HEADERS);
        TestVectors.assertReproduced(TestVectors.dir("fetch"), dir, all,
                "did the fetch layout change (then bump FetchProtocol.LAYOUT_VERSION, the spec and the C test)");
    }

    @Test
    void layoutConstantsAreTheSpecs() {
        assertEquals(0, FetchProtocol.KIND_OFFSET);
        assertEquals(4, FetchProtocol.REQUESTER_OFFSET);
        assertEquals(8, FetchProtocol.REPLY_TAG_OFFSET);
        assertEquals(12, FetchProtocol.CHUNK_BYTES_OFFSET);
        assertEquals(16, FetchProtocol.ID_OFFSET);
        assertEquals(24, FetchProtocol.POSITION_OFFSET);
        assertEquals(32, FetchProtocol.LENGTH_OFFSET);
        assertEquals(40, FetchProtocol.VERSION_OFFSET);
        assertEquals(48, FetchProtocol.SECRET_OFFSET);
        assertEquals(32, JobSecret.BYTES);
        assertEquals(80, FetchProtocol.REQUEST_BYTES);
        assertEquals(3, FetchProtocol.LAYOUT_VERSION);
        assertEquals(1, FetchProtocol.KIND_FETCH);
        assertEquals(2, FetchProtocol.KIND_SHUTDOWN);
        assertEquals(3, FetchProtocol.KIND_FETCH_WHOLE);
        assertEquals(4, FetchProtocol.KIND_FETCH_FOR_READER);
        assertEquals(0, FetchProtocol.STATUS_OFFSET);
        assertEquals(8, FetchProtocol.OBJECT_LENGTH_OFFSET);
        assertEquals(16, FetchProtocol.REPLY_LENGTH_OFFSET);
        assertEquals(24, FetchProtocol.REPLY_HEADER_BYTES);
        assertEquals(0, FetchProtocol.STATUS_OK);
        assertEquals(8388608, FetchProtocol.MAX_CHUNK_BYTES);
        assertEquals(524288, MpiTags.FETCH_REQUEST);
        assertEquals(1 << 24, MpiTags.REPLY_FIRST);
        assertEquals(1 << 30, MpiTags.REPLY_LIMIT);
        assertEquals(0x01000005, REPLY_TAG);
        assertEquals(CHUNK_BYTES, RemoteFetcher.DEFAULT_CHUNK_BYTES);
    }

    @Test
    void requestsDecodeToTheDocumentedValues() throws Exception {
        int[] kinds = {FetchProtocol.KIND_FETCH, FetchProtocol.KIND_FETCH_WHOLE, FetchProtocol.KIND_FETCH_FOR_READER};
        for (int i = 0; i < kinds.length; i++) {
            byte[] bytes = golden(REQUESTS.get(i));
            assertEquals(FetchProtocol.REQUEST_BYTES, bytes.length, REQUESTS.get(i));
            assertEquals(fetch(kinds[i]), FetchProtocol.decode(bytes), REQUESTS.get(i));
            assertRest(bytes);
        }
        byte[] shutdown = golden("request-shutdown.bin");
        assertEquals(FetchProtocol.REQUEST_BYTES, shutdown.length);
        assertEquals(shutdown(), FetchProtocol.decode(shutdown));
        assertRest(shutdown);
    }

    /** Version 3, four zero bytes, the test secret. */
    private static void assertRest(byte[] request) {
        assertEquals(3, ByteBuffer.wrap(request).getInt(40));
        assertEquals(0, ByteBuffer.wrap(request).getInt(44));
        assertArrayEquals(SECRET, Arrays.copyOfRange(request, 48, 80));
        assertTrue(FetchProtocol.authentic(request, JobSecret.of(SECRET)));
    }

    @Test
    void anotherSecretOrVersionIsNotAuthentic() throws Exception {
        JobSecret secret = JobSecret.of(SECRET);
        for (String name : REQUESTS) {
            byte[] request = golden(name);
            assertFalse(FetchProtocol.authentic(request, JobSecret.of(secretBytes(0x10))), name);
            byte[] lastByte = request.clone();
            lastByte[79] ^= 1;
            assertFalse(FetchProtocol.authentic(lastByte, secret), name + " with its secret's last byte changed");
            byte[] version2 = request.clone();
            ByteBuffer.wrap(version2).putInt(FetchProtocol.VERSION_OFFSET, 2);
            assertFalse(FetchProtocol.authentic(version2, secret), name + " as version 2");
            byte[] version1 = Arrays.copyOf(Arrays.copyOf(request, 40), FetchProtocol.REQUEST_BYTES);
            assertFalse(FetchProtocol.authentic(version1, secret), name + " as a zero-padded version 1");
        }
    }

    @Test
    void headersReadBackToTheDocumentedValues() throws Exception {
        long[][] expected = {
            {0, OBJECT_LENGTH_OK, LENGTH},
            {1, -1, 0},
            {3, OBJECT_LENGTH_BAD_RANGE, 0},
            {5, -1, 0},
            {1, OBJECT_LENGTH_FILLING, 0},
        };
        for (int i = 0; i < HEADERS.size(); i++) {
            String name = HEADERS.get(i);
            byte[] bytes = golden(name);
            assertEquals(FetchProtocol.REPLY_HEADER_BYTES, bytes.length, name);
            assertEquals(0, ByteBuffer.wrap(bytes).getInt(4), name + ": the zero word");
            // as the requester reads it: at an offset of a direct buffer whose order MPJ may have changed
            ByteBuffer received = ByteBuffer.allocateDirect(8 + bytes.length).order(ByteOrder.LITTLE_ENDIAN);
            received.put(8, bytes);
            assertEquals(expected[i][0], FetchProtocol.status(received, 8), name);
            assertEquals(expected[i][1], FetchProtocol.objectLength(received, 8), name);
            assertEquals(expected[i][2], FetchProtocol.replyLength(received, 8), name);
        }
        assertEquals(RemoteFetchException.Reason.NOT_HELD,
                FetchProtocol.reasonOf(FetchProtocol.status(ByteBuffer.wrap(golden("reply-header-not-held.bin")), 0)));
        // NOT_HELD with the object's length: the owner fills it (not yet); with -1 it does not keep it
        ByteBuffer filling = ByteBuffer.wrap(golden("reply-header-not-held-filling.bin"));
        assertTrue(new RemoteFetchException(1, 2, FetchProtocol.reasonOf(FetchProtocol.status(filling, 0)),
                FetchProtocol.objectLength(filling, 0), "filling").ownerFills());
        ByteBuffer notKept = ByteBuffer.wrap(golden("reply-header-not-held.bin"));
        assertFalse(new RemoteFetchException(1, 2, FetchProtocol.reasonOf(FetchProtocol.status(notKept, 0)),
                FetchProtocol.objectLength(notKept, 0), "not kept").ownerFills());
    }

    @Test
    void statusCodesAreTheSpecsTable() throws Exception {
        Map<Integer, String> table = specStatusTable();
        assertEquals("OK", table.get(FetchProtocol.STATUS_OK));
        assertEquals(RemoteFetchException.Reason.values().length + 1, table.size(),
                "every Reason has a row in the spec's table, and nothing else does: " + table);
        for (RemoteFetchException.Reason r : RemoteFetchException.Reason.values()) {
            assertEquals(r.name(), table.get(FetchProtocol.statusOf(r)), "status " + FetchProtocol.statusOf(r));
            assertEquals(r, FetchProtocol.reasonOf(FetchProtocol.statusOf(r)));
        }
        // the numbers themselves, also fixed here: a renumbered enum and an edited table must not agree by accident
        Map<String, Integer> fixed = Map.of("NOT_HELD", 1, "READ_FAILED", 2, "BAD_RANGE", 3, "BAD_REQUEST", 4,
                "UNAUTHORIZED", 5);
        assertEquals(fixed.size(), RemoteFetchException.Reason.values().length);
        for (RemoteFetchException.Reason r : RemoteFetchException.Reason.values()) {
            assertEquals(fixed.get(r.name()), FetchProtocol.statusOf(r), r.name());
        }
        assertEquals(RemoteFetchException.Reason.BAD_REQUEST, FetchProtocol.reasonOf(6), "an unknown status");
        assertEquals(RemoteFetchException.Reason.BAD_REQUEST, FetchProtocol.reasonOf(-1), "an unknown status");
    }

    /** Rows "| 3 | `BAD_RANGE` | ..." of the status table in this package's README.md. */
    private static Map<Integer, String> specStatusTable() throws Exception {
        Path repo = TestVectors.dir("fetch").getParent().getParent().getParent(); // <repo>/tests/vectors/fetch
        Path readme = repo.resolve("runtime/src/main/java/org/fanstore/runtime/fetch/README.md");
        String text = new String(Files.readAllBytes(readme), UTF_8);
        int section = text.indexOf("## Remote fetch: wire format");
        assertTrue(section >= 0, readme + " has no section \"Remote fetch: wire format\"");
        int end = text.indexOf("\n## ", section + 1);
        Matcher row = Pattern.compile("(?m)^\\| (-?\\d+) \\| `(\\w+)` \\|")
                .matcher(text.substring(section, end < 0 ? text.length() : end));
        Map<Integer, String> table = new TreeMap<>();
        while (row.find()) {
            assertEquals(null, table.put(Integer.parseInt(row.group(1)), row.group(2)), "status " + row.group(1)
                    + " twice in the spec's table");
        }
        return table;
    }
}
