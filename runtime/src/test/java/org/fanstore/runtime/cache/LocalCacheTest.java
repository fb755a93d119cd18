package org.fanstore.runtime.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.fanstore.prep.format.TestVectors;
import org.fanstore.runtime.layout.RankDirectory;
import org.fanstore.runtime.timing.Timing;
import org.junit.jupiter.api.Assumptions;
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
        MaterializedCache cache = new MaterializedCache(shm, local, 3L * MIB, refs, Timing.PIN_GRACE_NANOS,
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

    /**
     * A full local disk fails no read: a large file that finds too little room there (statvfs before it is written),
     * or that fills the disk while it is written, spills to the tmpfs directory within the same bound; the log says
     * so once, the answer and later lookups point at the spilled file, and eviction removes it from there.
     */
    @Test
    void aLargeFileThatFindsTheLocalDiskFullSpillsToTmpfs() throws Exception {
        Path shm = root.resolve("shm/cache");
        Path disk = Files.createDirectories(root.resolve("disk"));
        Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=7m", "tmpfs", disk.toString())
                .redirectErrorStream(true).start();
        Assumptions.assumeTrue(mount.waitFor() == 0, "cannot mount a tmpfs here (needs root)");
        try {
            Path local = disk.resolve("cache");
            ReferenceBits refs = ReferenceBits.create(root.resolve("cache.ref"), 8, MIB);
            List<String> log = new CopyOnWriteArrayList<>();
            MaterializedCache cache = new MaterializedCache(shm, local, 12L * MIB, refs,
                    Timing.PIN_GRACE_NANOS, id -> "entry " + id, log::add);
            // room for the first 2 MiB file; after it, less than 2 MiB + the margin is left
            Path first = cache.obtain(0, 2L * MIB, body(0, 2 * MIB), SECOND);
            assertEquals(local, first.getParent());
            Path spilled = cache.obtain(1, 2L * MIB, body(1, 2 * MIB), SECOND);
            assertEquals(shm, spilled.getParent(), "no room on the disk: written to tmpfs");
            assertArrayEquals(bytes(1, 2 * MIB), Files.readAllBytes(spilled));
            assertEquals(shm.resolve(RankDirectory.CACHE_FILE.fileName(1)), cache.pathOf(1, 2L * MIB));
            assertEquals(shm, cache.lookup(1).getParent(), "a later hit is answered from where it is");
            assertFalse(Files.exists(local.resolve(RankDirectory.CACHE_FILE.fileName(1))));
            assertEquals(1, log.size(), log.toString());
            assertTrue(log.get(0).startsWith(local + " is full: files of 1048576 bytes or more are materialised in "
                    + shm), log.get(0));

            // the statvfs check passes, then the disk fills while the file is written: the write is redone on tmpfs
            Path filler = disk.resolve("filler");
            int[] calls = {0};
            Path late = cache.obtain(2, 1L * MIB, out -> {
                if (calls[0]++ == 0) {
                    fill(filler);
                }
                body(2, MIB).writeTo(out);
            }, SECOND);
            assertEquals(2, calls[0], "written twice: on the disk (ENOSPC), then on tmpfs");
            assertEquals(shm, late.getParent());
            assertArrayEquals(bytes(2, MIB), Files.readAllBytes(late));
            assertEquals(1, log.size(), "said once: " + log);
            try (Stream<Path> s = Files.list(local)) {
                assertEquals(List.of(local.resolve(RankDirectory.CACHE_FILE.fileName(0))),
                        s.filter(f -> f.getFileName().toString().startsWith("e")).toList(),
                        "no temporary file left on the disk (pins aside)");
            }

            // 12 MiB: entries 0..2 (5 MiB) plus 10 MiB evicts cold 0 and 2 (spilled, from tmpfs); 1 was hit, stays
            Files.delete(filler);
            cache.obtain(3, 10L * MIB, body(3, 10 * MIB), SECOND);
            assertFalse(Files.exists(shm.resolve(RankDirectory.CACHE_FILE.fileName(2))), "spilled entry 2 evicted");
            assertTrue(Files.exists(shm.resolve(RankDirectory.CACHE_FILE.fileName(1))), "referenced entry 1 stayed");
            assertEquals(12L * MIB, cache.usedBytes());
            assertEquals(local.resolve(RankDirectory.CACHE_FILE.fileName(2)), cache.pathOf(2, MIB),
                    "once evicted, entry 2 is a disk file again");
        } finally {
            new ProcessBuilder("umount", "-l", disk.toString()).inheritIO().start().waitFor();
        }
    }

    /** A materialiser writing entry id's {@code n} bytes. */
    private static MaterializedCache.Materializer body(int id, int n) {
        return out -> {
            ByteBuffer b = ByteBuffer.wrap(bytes(id, n));
            while (b.hasRemaining()) {
                out.write(b);
            }
        };
    }

    private static byte[] bytes(int id, int n) {
        byte[] b = new byte[n];
        new Random(id).nextBytes(b);
        return b;
    }

    /** Writes {@code file} until its file system is full. */
    private static void fill(Path file) throws IOException {
        try (var out = Files.newOutputStream(file)) {
            byte[] chunk = new byte[64 << 10];
            while (true) {
                out.write(chunk);
            }
        } catch (IOException full) {
            if (!DiskFull.causedBy(full)) {
                throw full;
            }
        }
    }

    private static long count(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(f -> f.getFileName().toString().matches("e\\d+.*")).count();
        }
    }
}
