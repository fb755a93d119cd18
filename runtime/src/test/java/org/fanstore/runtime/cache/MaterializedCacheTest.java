package org.fanstore.runtime.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.fanstore.runtime.layout.RankDirectory;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MaterializedCacheTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    private static final int ENTRIES = 64;

    @TempDir
    Path rankDir;

    private Path dir;
    private ReferenceBits refs;

    @BeforeEach
    void createReferenceBits() throws IOException {
        dir = rankDir.resolve("cache");
        refs = ReferenceBits.create(RankDirectory.CACHE_REF.in(rankDir), ENTRIES);
    }

    private MaterializedCache cache(long capacity) throws IOException {
        return new MaterializedCache(dir, capacity, refs);
    }

    /** Sets a bit the way the shim does: through a mapping of its own, with one plain store. */
    private void touchAsShim(int id) throws IOException {
        try (FileChannel ch = FileChannel.open(RankDirectory.CACHE_REF.in(rankDir), StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            assertEquals(ENTRIES + ReferenceBits.TRAILER_BYTES, ch.size(), "one byte per entry, then the threshold");
            MappedByteBuffer shared = ch.map(FileChannel.MapMode.READ_WRITE, 0, ENTRIES);
            shared.put(id, (byte) 1);
        }
    }

    private static byte[] expected(int id, int size) {
        byte[] body = new byte[size];
        for (int i = 0; i < size; i++) {
            body[i] = (byte) (id * 31 + i);
        }
        return body;
    }

    private static MaterializedCache.Materializer bytes(int id, int size) {
        return out -> out.write(ByteBuffer.wrap(expected(id, size)));
    }

    /** What the shim does with an answer: opens the pin (here: reads it whole), then unlinks it. */
    private static byte[] openAsShim(Path pin) throws IOException {
        assertTrue(pin.getFileName().toString().startsWith("p"), "an answer is a pin: " + pin);
        byte[] body = Files.readAllBytes(pin);
        Files.delete(pin);
        return body;
    }

    /** Asks for id and opens the answer as the shim does. */
    private static byte[] served(MaterializedCache cache, int id, int size) throws IOException {
        byte[] body = openAsShim(cache.obtain(id, size, bytes(id, size), SECOND));
        assertArrayEquals(expected(id, size), body, "entry " + id);
        return body;
    }

    /** What the cache directory costs tmpfs: each inode once (a pin is a second name of a present file). */
    private long bytesInDir() throws IOException {
        java.util.Map<Object, Long> inodes = new java.util.HashMap<>();
        try (var files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                try {
                    inodes.put(Files.getAttribute(f, "unix:ino"), Files.size(f));
                } catch (java.nio.file.NoSuchFileException gone) {
                    // released or evicted while listing
                }
            }
        }
        return inodes.values().stream().mapToLong(Long::longValue).sum();
    }

    @Test
    void neverHoldsMoreThanItsBoundAndKeepsWhatTheRuntimeSawUsed() throws IOException {
        MaterializedCache cache = cache(10_000);
        for (int id = 0; id < 40; id++) {
            served(cache, id, 3_000);
            served(cache, 0, 3_000); // a hit served by the runtime sets the bit
            long onDisk = bytesInDir();
            assertTrue(onDisk <= 10_000, "bytes on tmpfs " + onDisk);
        }
        assertTrue(Files.exists(cache.pathOf(0)), "the hot entry survived");
        assertFalse(Files.exists(cache.pathOf(1)), "a cold entry was unlinked");
        try (var files = Files.list(dir)) {
            assertEquals(3, files.count(), "37 of the 40 files were evicted (3 of 3,000 bytes fit in 10,000)");
        }
    }

    @Test
    void clockGivesFilesOpenedBehindItsBackASecondChance() throws IOException {
        MaterializedCache cache = cache(10_000);
        served(cache, 1, 3_000);
        served(cache, 2, 3_000);
        served(cache, 3, 3_000);
        assertFalse(refs.isSet(1), "the open that materialised a file does not count as a reuse");
        for (int id = 4; id < 40; id++) {
            touchAsShim(1);  // a hit the cache never hears of, only its bit
            served(cache, id, 3_000);
            assertTrue(Files.exists(cache.pathOf(1)), "entry 1, referenced, survived round " + id);
            if (id - 2 != 1) {
                assertFalse(Files.exists(cache.pathOf(id - 2)), "entry " + (id - 2) + ", never reused, was evicted");
            }
            assertTrue(Files.exists(cache.pathOf(id - 1)) && Files.exists(cache.pathOf(id)));
            assertTrue(cache.usedBytes() <= 10_000);
        }
        assertArrayEquals(expected(1, 3_000), Files.readAllBytes(cache.pathOf(1)));
        assertFalse(Files.exists(cache.pathOf(2)));
        assertFalse(Files.exists(cache.pathOf(3)));
        long present;
        try (var files = Files.list(cache.pathOf(1).getParent())) {
            present = files.count();
        }
        assertEquals(3, present, "one eviction per new file once full: 3 files of 3,000 bytes fit in 10,000");

        // Not referenced any more: the hand clears its bit once, then evicts it.
        for (int id = 40; id < 43; id++) {
            served(cache, id, 3_000);
        }
        assertFalse(Files.exists(cache.pathOf(1)), "a file nobody opens again goes on the hand's second pass");
        assertTrue(cache.usedBytes() <= 10_000);
    }

    @Test
    void lookupAnswersOnlyPresentFilesAndCountsTheUse() throws IOException {
        MaterializedCache cache = cache(10_000);
        assertNull(cache.lookup(5));
        served(cache, 5, 100);
        assertFalse(refs.isSet(5));
        Path pin = cache.lookup(5);
        assertTrue(refs.isSet(5), "a hit the runtime serves itself sets the bit too");
        assertEquals(Files.readAttributes(cache.pathOf(5), "unix:ino").get("ino"),
                Files.readAttributes(pin, "unix:ino").get("ino"), "a pin is another name of the cached file");
        assertArrayEquals(expected(5, 100), openAsShim(pin));
        assertEquals(2, cache.pins());
    }

    @Test
    void concurrentRequestsForOneEntryMaterialiseItOnce() throws Exception {
        MaterializedCache cache = cache(1 << 20);
        AtomicInteger productions = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Path>> results = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                results.add(pool.submit(() -> cache.obtain(7, 50_000, out -> {
                    productions.incrementAndGet();
                    // Deliberately slow (not synchronisation): keeps the production running while the other
                    // requests arrive, so they find it in flight rather than finished.
                    java.util.concurrent.locks.LockSupport.parkNanos(50_000_000L);
                    bytes(7, 50_000).writeTo(out);
                }, 5 * SECOND)));
            }
            for (Future<Path> f : results) {
                byte[] body = openAsShim(f.get());
                assertEquals(50_000, body.length);
                assertEquals((byte) (7 * 31 + 49_999), body[49_999]);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1, productions.get());
    }

    @Test
    void aFailedProductionLeavesNothingAndCanBeRetried() throws IOException {
        MaterializedCache cache = cache(1 << 20);
        assertThrows(IOException.class, () -> cache.obtain(3, 100, out -> {
            throw new IOException("owner rank 2 unreachable");
        }, SECOND));
        assertThrows(IOException.class, () -> cache.obtain(3, 100, bytes(3, 99), SECOND), "short body refused");
        try (var files = Files.list(dir)) {
            assertEquals(0, files.count());
        }
        assertEquals(0, cache.usedBytes());
        served(cache, 3, 100);
    }

    @Test
    void aFullDiskFailureWithoutAMessageOfItsOwnIsReportedNamingTheDirectory() throws IOException {
        MaterializedCache cache = cache(1 << 20);
        IOException e = assertThrows(IOException.class, () -> cache.obtain(4, 100, out -> {
            throw new IOException((String) null, new IOException("No space left on device"));
        }, SECOND));
        assertTrue(e.getMessage().contains(dir.toString()), e.getMessage());
        try (var files = Files.list(dir)) {
            assertEquals(0, files.count());
        }
        served(cache, 4, 100);
    }

    @Test
    void anAnsweredFileOutlivesItsEvictionUntilItsReaderOpensIt() throws IOException {
        MaterializedCache cache = cache(6_000);
        Path pin1 = cache.obtain(1, 3_000, bytes(1, 3_000), SECOND);   // answered, not opened yet
        served(cache, 2, 3_000);
        Path pin2 = cache.lookup(2);                                     // a hit answered, not opened yet
        served(cache, 3, 3_000);                                         // the hand evicts entry 1
        assertFalse(Files.exists(cache.pathOf(1)), "entry 1 was evicted");
        assertEquals(1, cache.evictions());
        assertTrue(bytesInDir() <= 6_000 + 3_000, "over the bound by the one pinned file only: " + bytesInDir());
        assertArrayEquals(expected(1, 3_000), openAsShim(pin1), "the late reader still gets the whole file");
        assertArrayEquals(expected(2, 3_000), openAsShim(pin2));
        assertTrue(bytesInDir() <= 6_000, "within the bound once the pins are released: " + bytesInDir());
    }

    @Test
    void aPinNobodyOpensIsReclaimedAfterTheGraceWithOneLine() throws Exception {
        List<String> lines = new ArrayList<>();
        AtomicLong now = new AtomicLong(123_456_789L);   // nanoTime has no fixed origin
        MaterializedCache cache = new MaterializedCache(dir, null, 6_000, refs, TimeUnit.MILLISECONDS.toNanos(100),
                now::get, id -> "/fanstore/ds/f" + id, lines::add);
        Path orphan = cache.obtain(1, 3_000, bytes(1, 3_000), SECOND);   // its reader died before opening it
        served(cache, 2, 3_000);
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(250));
        served(cache, 3, 3_000);   // any later answer sweeps
        assertFalse(Files.exists(orphan), "reclaimed");
        assertEquals(1, cache.expiredPins());
        assertEquals(1, lines.size(), String.valueOf(lines));
        assertTrue(lines.get(0).contains("/fanstore/ds/f1"), lines.get(0));
        served(cache, 1, 3_000);   // and asking again serves it
        assertEquals(1, cache.expiredPins(), "the new answer was opened in time");
    }

    @Test
    void aFileLargerThanTheWholeCacheIsStillServedByACopyOfItsOwn() throws IOException {
        List<String> lines = new ArrayList<>();
        MaterializedCache cache = new MaterializedCache(dir, null, 1000, refs, SECOND, System::nanoTime,
                id -> "/fanstore/ds/big" + id, lines::add);
        served(cache, 4, 600);
        Path big = cache.obtain(1, 1001, bytes(1, 1001), SECOND);
        assertEquals(0, cache.usedBytes(), "the cache was emptied for it, and it does not stay");
        assertEquals(0, cache.files());
        assertArrayEquals(expected(1, 1001), openAsShim(big));
        served(cache, 1, 1001);
        assertEquals(2, cache.streamed());
        assertEquals(0, bytesInDir(), "nothing left once its readers opened it");
        assertEquals(1, lines.size(), "one line, not one per open: " + lines);
        assertTrue(lines.get(0).contains("/fanstore/ds/big1") && lines.get(0).contains("--cache-mb"), lines.get(0));
        served(cache, 4, 600);   // a small file is cached again afterwards
        assertEquals(1, cache.files());
    }

    /**
     * Readers that are slow to open their answers while others make the cache evict: every byte right, the
     * directory never over the bound by more than the pinned files, and nothing over it once they are opened.
     */
    @Test
    void concurrentReadersOfATinyCacheAlwaysGetTheirFile() throws Exception {
        int capacity = 10_000;
        int size = 3_000;
        int threads = 6;
        MaterializedCache cache = cache(capacity);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        AtomicInteger reads = new AtomicInteger();
        try {
            List<Future<Long>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int seed = t;
                results.add(pool.submit(() -> {
                    java.util.Random rnd = new java.util.Random(seed);
                    long worst = 0;
                    for (int i = 0; i < 300; i++) {
                        int id = rnd.nextInt(20);
                        Path pin = rnd.nextBoolean() ? cache.lookup(id) : null;
                        if (pin == null) {
                            pin = cache.obtain(id, size, bytes(id, size), 5 * SECOND);
                        }
                        Thread.yield();   // the open comes a little later, as in a real reader
                        worst = Math.max(worst, bytesInDir());
                        assertArrayEquals(expected(id, size), openAsShim(pin), "entry " + id);
                        reads.incrementAndGet();
                    }
                    return worst;
                }));
            }
            for (Future<Long> f : results) {
                long worst = f.get(60, TimeUnit.SECONDS);
                // present + in flight <= capacity, plus one pinned file per reader (and .tmp files count in
                // the reservation they belong to)
                assertTrue(worst <= capacity + (long) threads * size, "cache directory held " + worst);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(threads * 300, reads.get());
        assertTrue(cache.evictions() > 0, "the cache had to evict");
        assertTrue(bytesInDir() <= capacity, "within the bound after the run: " + bytesInDir());
        assertTrue(cache.usedBytes() <= capacity);
    }
}
