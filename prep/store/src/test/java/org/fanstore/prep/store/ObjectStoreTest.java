package org.fanstore.prep.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ObjectStore against a real S3Proxy process (no mock of the client). */
class ObjectStoreTest {
    @TempDir
    static Path tmp;
    static S3ProxyServer server;
    static ObjectStore store;

    @BeforeAll
    static void start() throws IOException {
        server = S3ProxyServer.start(Files.createDirectories(tmp.resolve("s3")));
        store = ObjectStore.connect(server.settings());
    }

    @AfterAll
    static void stop() {
        S3ProxyServer.stop(store, server);
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static long crc(byte[] b, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(b, off, len);
        return c.getValue();
    }

    /** Lays a file down in the bucket directory: an object at once (large objects without uploading them). */
    private static byte[] object(String key, int n, long seed) throws IOException {
        byte[] b = random(n, seed);
        Path f = server.bucketDir().resolve(key);
        Files.createDirectories(f.getParent());
        Files.write(f, b);
        return b;
    }

    @Test
    void rangedGetReturnsExactlyTheBytesAndCountsThem() throws IOException {
        byte[] b = random(1 << 20, 1);
        store.put(server.bucket(), "ranged/one", b);
        assertEquals(b.length, store.size(server.bucket(), "ranged/one"));
        long in = store.counters().bytesIn();
        long gets = store.counters().requests(StoreCounters.Kind.GET);
        long[][] ranges = {{0, 1}, {1000, 4096}, {b.length - 1, 1}, {12345, 700_000}};
        long total = 0;
        for (long[] r : ranges) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            store.read(server.bucket(), "ranged/one", r[0], r[1], Channels.newChannel(out));
            assertArrayEquals(Arrays.copyOfRange(b, (int) r[0], (int) (r[0] + r[1])), out.toByteArray());
            total += r[1];
        }
        ByteBuffer dst = ByteBuffer.allocate(333);
        store.read(server.bucket(), "ranged/one", 77, dst);
        assertArrayEquals(Arrays.copyOfRange(b, 77, 77 + 333), dst.array());
        assertEquals(total + 333, store.counters().bytesIn() - in);
        assertEquals(ranges.length + 1, store.counters().requests(StoreCounters.Kind.GET) - gets);
        assertArrayEquals(b, store.get(server.bucket(), "ranged/one"));
        assertTrue(store.counters().toString().contains("bytes_in="));
    }

    @Test
    void parallelRangedReadOf64MiBIsChecksummed() throws IOException {
        byte[] b = object("big/64m", 64 << 20, 2);
        long want = crc(b, 0, b.length);
        CRC32C got = new CRC32C();
        long[] seen = {0};
        store.readParallel(server.bucket(), "big/64m", 0, b.length, Sinks.of(src -> {
            int n = src.remaining();
            got.update(src);
            seen[0] += n;
            return n;
        }));
        assertEquals(b.length, seen[0]);
        assertEquals(want, got.getValue());
        // an odd range, positional into a file
        Path f = tmp.resolve("part.bin");
        long from = 3_000_001;
        int len = 40 << 20;
        try (FileChannel fc = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.READ)) {
            store.readToFile(server.bucket(), "big/64m", from, len, fc, 5);
        }
        byte[] back = Files.readAllBytes(f);
        assertEquals(len + 5, back.length);
        assertEquals(crc(b, (int) from, len), crc(back, 5, len));
    }

    @Test
    void multipartUploadRoundTrip() throws IOException {
        byte[] b = random(40 << 20, 3);   // three 16 MiB parts, the last short
        Path f = tmp.resolve("upload.bin");
        Files.write(f, b);
        long multipart = store.counters().requests(StoreCounters.Kind.MULTIPART);
        store.upload(server.bucket(), "up/data.fs/part-0", f);
        assertEquals(5, store.counters().requests(StoreCounters.Kind.MULTIPART) - multipart);   // create 3 complete
        assertEquals(b.length, store.size(server.bucket(), "up/data.fs/part-0"));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        store.readParallel(server.bucket(), "up/data.fs/part-0", 0, b.length, Channels.newChannel(out));
        assertEquals(crc(b, 0, b.length), crc(out.toByteArray(), 0, b.length));
        store.delete(server.bucket(), "up/data.fs/part-0");
        StoreException e = assertThrows(StoreException.class, () -> store.size(server.bucket(), "up/data.fs/part-0"));
        assertEquals(StoreException.Reason.NO_KEY, e.reason());
    }

    @Test
    void listsTwoThousandFiveHundredKeysOverPages() throws IOException {
        Path d = Files.createDirectories(server.bucketDir().resolve("many"));
        for (int i = 0; i < 2500; i++) {
            Files.write(d.resolve(String.format("k%05d", i)), new byte[i % 7]);
        }
        long lists = store.counters().requests(StoreCounters.Kind.LIST);
        List<ObjectStore.ObjectInfo> all = store.list(server.bucket(), "many/");
        assertEquals(2500, all.size());
        assertEquals(3, store.counters().requests(StoreCounters.Kind.LIST) - lists);
        for (int i = 0; i < 2500; i++) {
            assertEquals(String.format("many/k%05d", i), all.get(i).key());
            assertEquals(i % 7, all.get(i).size());
        }
    }

    private static void oneLine(StoreException e, String... names) {
        String m = e.getMessage();
        assertFalse(m.contains("\n"), m);
        assertFalse(m.contains("Exception"), m);
        assertFalse(m.contains("software.amazon"), m);
        assertFalse(m.contains(server.secretKey()), m);
        for (String n : names) {
            assertTrue(m.contains(n), m + " does not name " + n);
        }
    }

    @Test
    void wrongSecretIsOneLineWithoutTheSecret() throws IOException {
        String wrong = "wrong" + server.secretKey().substring(5);
        try (ObjectStore bad = ObjectStore.connect(ObjectStore.Settings.of(server.endpoint(), server.accessKey(),
                wrong))) {
            store.put(server.bucket(), "secret/x", new byte[10]);
            for (StoreException e : List.of(
                    assertThrows(StoreException.class, () -> bad.size(server.bucket(), "secret/x")),
                    assertThrows(StoreException.class, () -> bad.get(server.bucket(), "secret/x")))) {
                assertEquals(StoreException.Reason.BAD_CREDENTIALS, e.reason(), e.getMessage());
                oneLine(e, "s3://" + server.bucket() + "/secret/x", "AWS_SECRET_ACCESS_KEY", server.endpoint()
                        .toString());
                assertFalse(e.getMessage().contains(wrong));
            }
        }
        try (ObjectStore bad = ObjectStore.connect(ObjectStore.Settings.of(server.endpoint(), "nobody",
                server.secretKey()))) {
            StoreException e = assertThrows(StoreException.class, () -> bad.get(server.bucket(), "secret/x"));
            assertEquals(StoreException.Reason.BAD_CREDENTIALS, e.reason(), e.getMessage());
            oneLine(e);
        }
    }

    @Test
    void noBucketAndNoKeyAreOneLineEach() {
        StoreException e = assertThrows(StoreException.class, () -> store.size("no-such-bucket-43", "a/b"));
        assertEquals(StoreException.Reason.NO_BUCKET, e.reason(), e.getMessage());
        oneLine(e, "no-such-bucket-43");
        e = assertThrows(StoreException.class, () -> store.get("no-such-bucket-43", "a/b"));
        assertEquals(StoreException.Reason.NO_BUCKET, e.reason(), e.getMessage());
        e = assertThrows(StoreException.class, () -> store.read("no-such-bucket-43", "a/b", 0, ByteBuffer.allocate(1)));
        assertEquals(StoreException.Reason.NO_BUCKET, e.reason(), e.getMessage());
        e = assertThrows(StoreException.class, () -> store.list("no-such-bucket-43", ""));
        assertEquals(StoreException.Reason.NO_BUCKET, e.reason(), e.getMessage());
        e = assertThrows(StoreException.class, () -> store.size(server.bucket(), "nothing/here.fs/manifest.txt"));
        assertEquals(StoreException.Reason.NO_KEY, e.reason(), e.getMessage());
        oneLine(e, "s3://" + server.bucket() + "/nothing/here.fs/manifest.txt");
        e = assertThrows(StoreException.class, () -> store.read(server.bucket(), "nothing", 0, ByteBuffer.allocate(1)));
        assertEquals(StoreException.Reason.NO_KEY, e.reason(), e.getMessage());
    }

    @Test
    void noCredentialsInAnEmptyEnvironmentIsOneLine() throws Exception {
        Path home = Files.createDirectories(tmp.resolve("empty-home"));
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ProcessBuilder pb = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                NoCredentialsMain.class.getName());
        pb.environment().clear();
        pb.environment().put("HOME", home.toString());
        pb.environment().put("AWS_EC2_METADATA_DISABLED", "true");
        pb.environment().put("AWS_CONFIG_FILE", home.resolve("config").toString());
        pb.environment().put("AWS_SHARED_CREDENTIALS_FILE", home.resolve("credentials").toString());
        pb.environment().put("AWS_ENDPOINT_URL", server.endpoint().toString());
        pb.redirectErrorStream(true);
        Process p = pb.start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.endsWith("NO_CREDENTIALS: no credentials found for the object store (" + server.endpoint()
                + "): set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE"), out);
    }

    @Test
    void slowDownTwiceIsRetriedAndPastTheBoundIsOneLine() throws IOException {
        byte[] b = random(5000, 5);
        store.put(server.bucket(), "slow/x", b);
        try (SlowDownProxy proxy = new SlowDownProxy(server.port(), 2);
             ObjectStore viaProxy = ObjectStore.connect(ObjectStore.Settings.of(proxy.endpoint(), server.accessKey(),
                     server.secretKey()))) {
            long t = System.nanoTime();
            assertArrayEquals(b, viaProxy.get(server.bucket(), "slow/x"));
            assertEquals(2, proxy.refused());
            assertEquals(1, viaProxy.counters().requests(StoreCounters.Kind.HEAD));   // one request, 3 attempts
            assertTrue(System.nanoTime() - t < StoreTiming.API_CALL_TIMEOUT.toNanos());
        }
        try (SlowDownProxy proxy = new SlowDownProxy(server.port(), Integer.MAX_VALUE);
             ObjectStore viaProxy = ObjectStore.connect(ObjectStore.Settings.of(proxy.endpoint(), server.accessKey(),
                     server.secretKey()).withBounds(Duration.ofSeconds(20), Duration.ofSeconds(5),
                     Duration.ofSeconds(5), 3))) {
            StoreException e = assertThrows(StoreException.class, () -> viaProxy.read(server.bucket(), "slow/x", 0,
                    ByteBuffer.allocate(10)));
            assertEquals(StoreException.Reason.THROTTLED, e.reason(), e.getMessage());
            assertEquals(3, proxy.refused());
            oneLine(e, "SlowDown", "s3://" + server.bucket() + "/slow/x", proxy.endpoint().toString());
        }
        // a caller's deadline reached while the store answers (503s): it is slow, not silent (README.md, "A
        // caller's deadline")
        try (SlowDownProxy proxy = new SlowDownProxy(server.port(), Integer.MAX_VALUE);
             ObjectStore viaProxy = ObjectStore.connect(ObjectStore.Settings.of(proxy.endpoint(), server.accessKey(),
                     server.secretKey()))) {
            long t = System.nanoTime();
            StoreException e = assertThrows(StoreException.class, () -> viaProxy.read(server.bucket(), "slow/x", 0,
                    10, Sinks.into(ByteBuffer.allocate(10)), t + TimeUnit.MILLISECONDS.toNanos(1500)));
            assertEquals(StoreException.Reason.FAILED, e.reason(), e.getMessage());
            assertTrue(proxy.refused() >= 2, proxy.refused() + " attempts refused");
            oneLine(e, "throttling", "s3://" + server.bucket() + "/slow/x", proxy.endpoint().toString());
        }
    }

    @Test
    void serverKilledMidReadEndsWithinTheBoundNamingTheEndpoint() throws IOException {
        try (S3ProxyServer own = S3ProxyServer.start(Files.createDirectories(tmp.resolve("killed")));
             ObjectStore s = ObjectStore.connect(own.settings().withBounds(Duration.ofSeconds(5),
                     Duration.ofSeconds(3), Duration.ofSeconds(3), 3))) {
            Path f = own.bucketDir().resolve("big");
            Files.write(f, random(32 << 20, 6));
            List<Integer> writes = new ArrayList<>();
            long t = System.nanoTime();
            StoreException e = assertThrows(StoreException.class, () -> s.read(own.bucket(), "big", 0, 32 << 20,
                    Sinks.of(src -> {
                        if (writes.size() == 4) {
                            own.kill();
                        }
                        writes.add(src.remaining());
                        int n = src.remaining();
                        src.position(src.limit());
                        return n;
                    })));
            long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t);
            assertEquals(StoreException.Reason.NOT_ANSWERING, e.reason(), e.getMessage());
            oneLine(e, own.endpoint().toString(), "s3://" + own.bucket() + "/big");
            assertTrue(seconds < 30, seconds + " s");
        }
    }

    /**
     * A caller's deadline (README.md, "A caller's deadline") on a store that hangs (S3Proxy SIGSTOPped: connections
     * accepted, nothing answered): the read ends at the deadline, not at the client's 60 s bound, as NOT_ANSWERING
     * naming the key; once the store runs again the same read with a deadline returns the bytes.
     */
    @Test
    void aReadEndsAtItsCallersDeadlineWhenTheStoreHangs() throws IOException {
        try (S3ProxyServer own = S3ProxyServer.start(Files.createDirectories(tmp.resolve("paused")));
             ObjectStore s = ObjectStore.connect(own.settings())) {
            byte[] body = random(17 << 20, 7);
            Files.write(own.bucketDir().resolve("obj"), body);
            ByteBuffer warm = ByteBuffer.allocate(16);
            s.read(own.bucket(), "obj", 0, warm);   // a pooled connection the stopped store then leaves unanswered
            own.pause();
            try {
                for (long size : new long[] {1 << 20, 17 << 20}) {   // one GET on the caller, then 3 parts
                    long t = System.nanoTime();
                    StoreException e = assertThrows(StoreException.class, () -> s.readParallel(own.bucket(), "obj",
                            0, size, Sinks.into(ByteBuffer.allocate((int) size)), t + TimeUnit.SECONDS.toNanos(3)));
                    double seconds = (System.nanoTime() - t) / 1e9;
                    assertEquals(StoreException.Reason.NOT_ANSWERING, e.reason(), e.getMessage());
                    oneLine(e, own.endpoint().toString(), "s3://" + own.bucket() + "/obj", "gave no answer");
                    assertTrue(seconds >= 2.9 && seconds < 8, size + " bytes: ended after " + seconds + " s");
                }
            } finally {
                own.resume();
            }
            ByteBuffer all = ByteBuffer.allocate(body.length);
            s.readParallel(own.bucket(), "obj", 0, body.length, Sinks.into(all),
                    System.nanoTime() + TimeUnit.SECONDS.toNanos(30));
            assertArrayEquals(body, all.array());
        }
    }
}
