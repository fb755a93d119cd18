package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.fanstore.prep.format.TableInfo;
import org.fanstore.prep.format.table.FarVector;
import org.fanstore.prep.format.table.MetadataTableDescriptor;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tables past what one Java buffer maps, as a job sees them: every rank lists the files and stats and reads the last
 * one (key order) as the source tree has them. In CI the runtime maps its table in 4 KiB windows
 * ({@code fanstore.table.windowShift=12}), so a 120 KB table crosses ~30 of them on rank 0's read and broadcast,
 * on rank 1's landing and on every lookup; with {@code -Dfanstore.bigTableJob=true} (heavy: 2 GiB of shared memory
 * per rank) the same job runs over the dataset's real table moved past 2 GiB (its string pool, bodies and trailer).
 */
class LargeTableJobTest {
    private static final int DIRS = 40;
    private static final int FILES_PER_DIR = 50;
    private static final String LAST = "ds/n0039/n0039_0049.JPEG";
    /** What each rank and the native run print: the file count, the last file's stat and its bytes' digest. */
    private static final String PROBE = "find ds -type f | wc -l; ls ds/n0039 | tail -1; stat -c '%n|%s|%A|%Y' "
            + LAST + "; md5sum " + LAST;

    @TempDir
    static Path work;
    static Path src;
    static Path data;

    @BeforeAll
    static void prepare() throws Exception {
        src = work.resolve("src");
        for (int d = 0; d < DIRS; d++) {
            String dir = String.format("n%04d", d);
            Path sub = Files.createDirectories(src.resolve("ds").resolve(dir));
            for (int i = 0; i < FILES_PER_DIR; i++) {
                String name = String.format("%s_%04d.JPEG", dir, i);
                Files.writeString(sub.resolve(name), (name + "\n").repeat(1 + (d * 7 + i) % 23));
            }
        }
        data = work.resolve("ds.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 180, "prep", "--input", src.resolve("ds").toString(),
                "--output", data.toString(), "--partitions", "3"));
    }

    private static String nativeProbe() throws Exception {
        Process p = new ProcessBuilder("sh", "-c", PROBE).directory(src.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        return out;
    }

    private static void probeEveryRank(Path dataset, String label, Map<String, String> env) throws Exception {
        Path out = Files.createDirectories(work.resolve("probe-" + label));
        FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, env, 600, "run", "--ranks", "2",
                "--data", dataset.toString(), "--local-dir", work.toString(), "--", "sh", "-c",
                "cd /fanstore && { " + PROBE + "; } > " + out + "/rank-$FANSTORE_RANK.txt 2>&1"));
        String want = nativeProbe();
        assertTrue(want.startsWith(DIRS * FILES_PER_DIR + "\n"), want);
        for (int rank = 0; rank < 2; rank++) {
            assertEquals(want, Files.readString(out.resolve("rank-" + rank + ".txt")), "rank " + rank + "; "
                    + r.stderr());
        }
    }

    @Test
    void aJobWhoseTableSpansManyWindowsSeesEveryFileAndReadsTheLast() throws Exception {
        long table = Files.size(data.resolve(TableInfo.FILE_NAME));
        assertTrue(table > 24 * 4096, "the table must cross many 4 KiB windows: " + table + " bytes");
        probeEveryRank(data, "small-windows", Map.of("FANSTORE_RUNTIME_JAVA_OPTS", "-Dfanstore.table.windowShift=12"));
    }

    @Test
    @EnabledIfSystemProperty(named = "fanstore.bigTableJob", matches = "true")
    void aJobOverATableLargerThanTwoGibStatsAndReadsItsLastFile() throws Exception {
        Path big = Files.createDirectories(work.resolve("big.fs"));
        try (var files = Files.list(data)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (!f.getFileName().toString().equals(TableInfo.FILE_NAME)) {
                    Files.copy(f, big.resolve(f.getFileName()));
                }
            }
        }
        byte[] table = Files.readAllBytes(data.resolve(TableInfo.FILE_NAME));
        FarVector.Image moved = FarVector.relocate(table, (2L << 30) + 4096, 0);
        Path tbl = big.resolve(TableInfo.FILE_NAME);
        moved.write(tbl);
        assertTrue(Files.size(tbl) > (2L << 30), "the table is over 2 GiB: " + Files.size(tbl));
        int crc = ByteBuffer.wrap(moved.extents().get(0).bytes()).order(ByteOrder.LITTLE_ENDIAN)
                .getInt(MetadataTableDescriptor.CRC_OFFSET);
        Path manifest = big.resolve("manifest.txt");
        Files.writeString(manifest, Files.readString(manifest, StandardCharsets.ISO_8859_1).replaceAll(
                "(?m)^table .*$", String.format("table %s %d %08x", TableInfo.FILE_NAME, Files.size(tbl), crc)),
                StandardCharsets.ISO_8859_1);
        try {
            probeEveryRank(big, "over-2-gib", Map.of());
        } finally {
            Files.deleteIfExists(tbl);
        }
    }
}
