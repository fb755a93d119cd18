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

    @Test
    void neverHoldsMoreThanItsBoundAndKeepsWhatTheRuntimeSawUsed() throws IOException {
        MaterializedCache cache = cache(10_000);
        for (int id = 0; id < 40; id++) {
            Path p = cache.obtain(id, 3_000, bytes(id, 3_000), SECOND);
            assertEquals(3_000, Files.size(p));
            cache.obtain(0, 3_000, bytes(0, 3_000), SECOND); // a hit served by the runtime sets the bit
            long onDisk;
            try (var files = Files.list(dir)) {
                onDisk = files.mapToLong(f -> f.toFile().length()).sum();
            }
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
        cache.obtain(1, 3_000, bytes(1, 3_000), SECOND);
        cache.obtain(2, 3_000, bytes(2, 3_000), SECOND);
        cache.obtain(3, 3_000, bytes(3, 3_000), SECOND);
        assertFalse(refs.isSet(1), "the open that materialised a file does not count as a reuse");
        for (int id = 4; id < 40; id++) {
            touchAsShim(1);  // a hit the cache never hears of, only its bit
            cache.obtain(id, 3_000, bytes(id, 3_000), SECOND);
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
            cache.obtain(id, 3_000, bytes(id, 3_000), SECOND);
        }
        assertFalse(Files.exists(cache.pathOf(1)), "a file nobody opens again goes on the hand's second pass");
        assertTrue(cache.usedBytes() <= 10_000);
    }

    @Test
    void lookupAnswersOnlyPresentFilesAndCountsTheUse() throws IOException {
        MaterializedCache cache = cache(10_000);
        assertNull(cache.lookup(5));
        cache.obtain(5, 100, bytes(5, 100), SECOND);
        assertFalse(refs.isSet(5));
        assertEquals(cache.pathOf(5), cache.lookup(5));
        assertTrue(refs.isSet(5), "a hit the runtime serves itself sets the bit too");
        assertArrayEquals(expected(5, 100), Files.readAllBytes(cache.lookup(5)));
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
                byte[] body = Files.readAllBytes(f.get());
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
        byte[] body = Files.readAllBytes(cache.obtain(3, 100, bytes(3, 100), SECOND));
        assertArrayEquals(expected(3, 100), body);
    }

    @Test
    void aFileLargerThanTheCacheIsRefusedWithAHint() throws IOException {
        MaterializedCache cache = cache(1000);
        MaterializedCache.CacheFullException e = assertThrows(MaterializedCache.CacheFullException.class,
                () -> cache.obtain(1, 1001, bytes(1, 1001), SECOND));
        assertTrue(e.getMessage().contains("--cache-mb"), e.getMessage());
    }
}
