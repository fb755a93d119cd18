package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Large materialised files on node-local disk (issue 8): LZ4 files just below and from the 1 MiB threshold are
 * decoded into the tmpfs cache and the local one respectively, read right on the first and the warm pass, every
 * warm open a direct shim hit (so the shim found both directories without asking), and both caches are gone
 * when the job ends.
 */
class LocalCacheReadTest {
    private static final int MIB = 1 << 20;
    private static final int[] SIZES = {100_000, MIB - 1, MIB, 2 * MIB + 1};

    @TempDir
    Path work;

    @Test
    void filesOnEitherSideOfTheThresholdReadRightAndWarmOpensAreDirect() throws Exception {
        Path src = work.resolve("src/lz");
        Files.createDirectories(src);
        Map<String, String> sums = new TreeMap<>();
        StringBuilder files = new StringBuilder();
        for (int size : SIZES) {
            byte[] body = SampleDataset.compressibleText(size);
            String name = "f" + size + ".csv";
            Files.write(src.resolve(name), body);
            sums.put(name, HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body)));
            files.append(" /fanstore/lz/").append(name);
        }
        Path data = work.resolve("lz.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                data.toString(), "--partitions", "1", "--compress", "lz4"));
        Path local = work.resolve("local");
        Files.createDirectories(local);
        // the first pass starts once the fill has ended (its marker, at most 60 s): an open while the partition is
        // still filling rides the fill's ranges and counts as a fetch, which is not what this test is about
        String job = "i=0; while [ ! -e \"$FANSTORE_SHM_DIR/prefetched\" ]; do [ $i -lt 600 ] ||"
                + " { echo 'the fill did not end within 60 s' >&2; exit 3; }; sleep 0.1; i=$((i + 1)); done"
                + " && sha256sum" + files + " > first.txt"
                + " && ls \"$FANSTORE_SHM_DIR/cache\" > shm-cache.txt"
                + " && ls " + local + "/fanstore-*/rank-0/cache > local-cache.txt"
                + " && sha256sum" + files + " > warm.txt"
                + " && printf %s \"$FANSTORE_SHM_DIR\" > shm-dir.txt";
        Path stats = work.resolve("stats.json");
        FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "run", "--ranks", "1",
                "--data", data.toString(), "--local-dir", local.toString(), "--stats", stats.toString(), "--",
                "sh", "-c", job));
        assertEquals(sums, read(work.resolve("first.txt")), "first pass\n" + r.stderr());
        assertEquals(sums, read(work.resolve("warm.txt")), "warm pass\n" + r.stderr());
        assertEquals(2, cacheFiles(work.resolve("shm-cache.txt")), "files below 1 MiB in tmpfs");
        assertEquals(2, cacheFiles(work.resolve("local-cache.txt")), "files from 1 MiB on, on local disk");
        for (String listing : List.of("shm-cache.txt", "local-cache.txt")) {
            // each runtime answer was a pin (a hard link beside its file); the reader's shim unlinked it after opening
            assertEquals(List.of(), Files.readAllLines(work.resolve(listing)).stream().filter(n -> n.startsWith("p"))
                    .toList(), listing + ": pins left behind");
        }

        String json = Files.readString(stats);
        assertEquals(SIZES.length, JsonField.first(json, "decompressed"), "one decode per file\n" + json);
        assertEquals(SIZES.length, JsonField.first(json, "cache_hit_direct"), "warm opens by the shim itself\n" + json);
        assertEquals(0, JsonField.first(json, "cache_hit_via_runtime"), json);
        assertEquals(0, JsonField.first(json, "evictions"), json);

        try (Stream<Path> left = Files.list(local)) {
            assertEquals(List.of(), left.toList(), "nothing left in the local directory");
        }
        Path shmDir = Path.of(Files.readString(work.resolve("shm-dir.txt")));
        assertTrue(shmDir.startsWith("/dev/shm"), shmDir.toString());
        assertFalse(Files.exists(shmDir.getParent()), "the job's /dev/shm root is gone: " + shmDir.getParent());
    }

    private static Map<String, String> read(Path sums) throws Exception {
        Map<String, String> got = new TreeMap<>();
        for (String line : Files.readAllLines(sums)) {
            String[] f = line.split(" +", 2);
            got.put(f[1].substring("/fanstore/lz/".length()), f[0]);
        }
        return got;
    }

    /** Complete cache files (e<index>) in an ls listing, not temporaries. */
    private static long cacheFiles(Path listing) throws Exception {
        return Files.readAllLines(listing).stream().filter(n -> n.matches("e\\d+")).count();
    }
}
