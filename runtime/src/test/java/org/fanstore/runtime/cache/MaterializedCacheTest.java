package org.fanstore.runtime.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MaterializedCacheTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    @TempDir
    Path dir;

    private static MaterializedCache.Materializer bytes(int id, int size) {
        return out -> {
            byte[] body = new byte[size];
            for (int i = 0; i < size; i++) {
                body[i] = (byte) (id * 31 + i);
            }
            out.write(ByteBuffer.wrap(body));
        };
    }

    @Test
    void neverHoldsMoreThanItsBoundAndEvictsLeastRecentlyUsed() throws IOException {
        MaterializedCache cache = new MaterializedCache(dir, 10_000);
        for (int id = 0; id < 40; id++) {
            Path p = cache.obtain(id, 3_000, bytes(id, 3_000), SECOND);
            assertEquals(3_000, Files.size(p));
            cache.obtain(0, 3_000, bytes(0, 3_000), SECOND); // keep entry 0 hot
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
    void concurrentRequestsForOneEntryMaterialiseItOnce() throws Exception {
        MaterializedCache cache = new MaterializedCache(dir, 1 << 20);
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
        MaterializedCache cache = new MaterializedCache(dir, 1 << 20);
        assertThrows(IOException.class, () -> cache.obtain(3, 100, out -> {
            throw new IOException("owner rank 2 unreachable");
        }, SECOND));
        assertThrows(IOException.class, () -> cache.obtain(3, 100, bytes(3, 99), SECOND), "short body refused");
        try (var files = Files.list(dir)) {
            assertEquals(0, files.count());
        }
        assertEquals(0, cache.usedBytes());
        byte[] body = Files.readAllBytes(cache.obtain(3, 100, bytes(3, 100), SECOND));
        byte[] expected = new byte[100];
        for (int i = 0; i < expected.length; i++) {
            expected[i] = (byte) (3 * 31 + i);
        }
        assertArrayEquals(expected, body);
    }

    @Test
    void aFileLargerThanTheCacheIsRefusedWithAHint() throws IOException {
        MaterializedCache cache = new MaterializedCache(dir, 1000);
        MaterializedCache.CacheFullException e = assertThrows(MaterializedCache.CacheFullException.class,
                () -> cache.obtain(1, 1001, bytes(1, 1001), SECOND));
        assertTrue(e.getMessage().contains("--cache-mb"), e.getMessage());
    }
}
