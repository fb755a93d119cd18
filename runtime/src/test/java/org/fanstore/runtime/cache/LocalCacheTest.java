package org.fanstore.runtime.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.fanstore.runtime.TestVectors;
import org.fanstore.runtime.layout.RankDirectory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Large materialised files on node-local disk: cache.ref carries the threshold the shim reads (golden image
 * {@code tests/vectors/cache/cache-ref-3.bin}, also checked by interpose-native/tests/test_cache_view.c), files
 * from the threshold on land in the local directory, smaller ones in the tmpfs one, and one bound and one CLOCK
 * hand cover both.
 */
class LocalCacheTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final int MIB = 1 << 20;

    @TempDir
    Path root;

    @Test
    void theRuntimeWritesTheGoldenImage() throws IOException {
        Path ref = root.resolve("cache.ref");
        ReferenceBits refs = ReferenceBits.create(ref, 3, MaterializedCache.LOCAL_MIN_BYTES);
        Path golden = TestVectors.dir("cache").resolve("cache-ref-3.bin");
        assertArrayEquals(Files.readAllBytes(golden), Files.readAllBytes(ref));
        assertEquals(MIB, refs.localMinBytes());
        refs.set(1);
        assertEquals(1, Files.readAllBytes(ref)[1], "byte 1 belongs to entry 1");
        assertEquals(0, Files.readAllBytes(ref)[3], "the trailer is untouched by the bits");
    }

    @Test
    void filesGoWhereTheirSizeSaysAndOneBoundCoversBoth() throws IOException {
        Path shm = root.resolve("shm/cache");
        Path local = root.resolve("local/cache");
        ReferenceBits refs = ReferenceBits.create(root.resolve("cache.ref"), 8, MIB);
        MaterializedCache cache = new MaterializedCache(shm, local, 3L * MIB, refs, MaterializedCache.PIN_GRACE_NANOS,
                id -> "entry " + id, line -> { });
        long[] sizes = {MIB - 1, MIB, 2L * MIB};
        for (int id = 0; id < sizes.length; id++) {
            long size = sizes[id];
            Path p = cache.obtain(id, size, out -> out.write(ByteBuffer.allocate((int) size)), SECOND);
            // the answer is a pin (a hard link): beside its file, which needs one file system
            assertEquals(size >= MIB ? local : shm, p.getParent(), "entry " + id + " of " + size + " bytes");
            assertEquals(p.getParent(), cache.lookup(id).getParent());
            assertEquals(size, Files.size(p));
            assertTrue(Files.isSameFile(p, cache.pathOf(id, size)));
        }
        // 4 MiB - 1 cannot fit under 3 MiB: the hand evicted entry 0 (tmpfs) to fit entry 2 (local)
        assertFalse(Files.exists(shm.resolve(RankDirectory.CACHE_FILE.fileName(0))), "evicted from tmpfs");
        assertEquals(3L * MIB, cache.usedBytes());
        refs.set(2);
        cache.obtain(3, 10, out -> out.write(ByteBuffer.allocate(10)), SECOND);
        assertFalse(Files.exists(local.resolve(RankDirectory.CACHE_FILE.fileName(1))), "cold entry 1 left the disk");
        assertTrue(Files.exists(local.resolve(RankDirectory.CACHE_FILE.fileName(2))), "referenced entry 2 stayed");
        assertEquals(2, count(shm) + count(local), "no temporary files: e3 and e2 only (pins aside)");
    }

    @Test
    void withoutALocalDirectoryEverythingStaysOnTmpfs() throws IOException {
        Path shm = root.resolve("shm/cache");
        ReferenceBits refs = ReferenceBits.create(root.resolve("cache.ref"), 2);
        MaterializedCache cache = new MaterializedCache(shm, 4L * MIB, refs);
        Path p = cache.obtain(1, 2L * MIB, out -> out.write(ByteBuffer.allocate(2 * MIB)), SECOND);
        assertEquals(shm, p.getParent());
    }

    private static long count(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(f -> f.getFileName().toString().matches("e\\d+.*")).count();
        }
    }
}
