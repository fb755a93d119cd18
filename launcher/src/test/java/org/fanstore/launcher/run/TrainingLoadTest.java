package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PartitionReader;
import org.fanstore.runtime.layout.RankDirectory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The load test (issue 10): `fanstore run --ranks 2`, and on every rank 2 python3 training processes
 * (tests/load/training_load.py), each a torch DataLoader with 4 forked workers reading the whole dataset in
 * random order for 2 epochs (with the default knobs, then with lazy unpacking and no pull). The dataset mixes
 * sizes (0 B to 5 MiB) and bodies that LZ4 keeps compressed with random ones stored raw, in 8 partitions, so
 * every rank reads local raw files (direct opens), local compressed ones (decoded into the cache), remote ones of
 * both kinds (fetched from the other rank), through a 16 MiB cache that must evict while 8 readers hold files
 * open. Every sample's SHA-256 is compared with the source tree's;
 * every worker checks after each sample, and every process at the end of each epoch, that no descriptor into
 * the mount, the job's shared memory or its local directory is left open. Each rank's runtime JVM's peak
 * memory (VmHWM, read from /proc at the end of the job) is printed. After the job nothing of it is left.
 *
 * <p>{@code FANSTORE_SOAK=1} in the environment makes it the soak: 4 ranks, 6 epochs, twice the files, and
 * the same with a cache barely larger than the largest file (issue 8: see that test).
 */
class TrainingLoadTest {
    private static final boolean SOAK = "1".equals(System.getenv("FANSTORE_SOAK"));
    private static final int RANKS = SOAK ? 4 : 2;
    private static final int EPOCHS = SOAK ? 6 : 2;
    private static final int FILES = SOAK ? 384 : 192;
    private static final int PROCS = 2;
    private static final int WORKERS = 4;
    private static final int PARTITIONS = 8;
    private static final String PYTHON = "/usr/bin/python3";
    private static final Pattern EPOCH = Pattern.compile("^EPOCH tag=(\\S+) epoch=(\\d+) samples=(\\d+)"
            + " distinct=(\\d+) bytes=(\\d+) mismatches=(\\d+) errors=(\\d+) worker_fd_leaks=(\\d+) fd_leak=(\\d+)"
            + " seconds=\\S+$", Pattern.MULTILINE);
    private static final Pattern RUNTIME = Pattern.compile("^RUNTIME rank=(\\d+) pid=(\\d+) vmhwm_kb=(\\d+)"
            + " vmrss_kb=(\\d+) rss_anon_kb=(\\d+) rss_file_kb=(\\d+) rss_shmem_kb=(\\d+)$", Pattern.MULTILINE);

    @TempDir
    static Path work;

    /** "/fanstore/ds/..." -> "sha256\tsize" of the source bytes. */
    static final Map<String, String> expected = new TreeMap<>();
    static long totalBytes;
    static Path data;
    static Path expectedFile;

    @BeforeAll
    static void prepare() throws Exception {
        Process probe = new ProcessBuilder(PYTHON, "-c", "import torch").redirectErrorStream(true).start();
        String why = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, probe.waitFor(), PYTHON + " cannot import torch: install python3-torch (or run"
                + " scripts/setup-debian.sh deps):\n" + why);
        Path src = work.resolve("src/ds");
        Random rnd = new Random(2024);
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        for (int i = 0; i < FILES; i++) {
            byte[] body = new byte[sizeOf(i, rnd)];
            // half the files random (LZ4 does not pay: stored raw), half half-text (stored LZ4), in every size
            boolean compressible = (i % 2 == 1) ^ ((i / 16) % 2 == 1);
            for (int k = 0; k < body.length; k++) {
                body[k] = compressible && (k & 4095) >= 2048 ? (byte) "label,0.5,class\n".charAt(k % 16)
                        : (byte) rnd.nextInt();
            }
            String rel = "class" + i % 8 + (i % 5 == 0 ? "/deep/er" : "") + "/sample" + i + ".bin";
            Path f = src.resolve(rel);
            Files.createDirectories(f.getParent());
            Files.write(f, body);
            expected.put("/fanstore/ds/" + rel, HexFormat.of().formatHex(sha.digest(body)) + "\t" + body.length);
            totalBytes += body.length;
        }
        data = work.resolve("ds.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                data.toString(), "--partitions", Integer.toString(PARTITIONS), "--compress", "lz4"));
        expectedFile = work.resolve("expected.tsv");
        List<String> lines = new ArrayList<>();
        expected.forEach((path, shaSize) -> lines.add(shaSize + "\t" + path));
        Files.write(expectedFile, lines, StandardCharsets.UTF_8);
    }

    /** Every 16th file 2-5 MiB, every 8th 256 KiB-1 MiB, the others 0 B-64 KiB (a few empty or tiny). */
    private static int sizeOf(int i, Random rnd) {
        if (i % 16 == 7) {
            return (2 << 20) + rnd.nextInt(3 << 20);
        }
        if (i % 8 == 6) {
            return (256 << 10) + rnd.nextInt(768 << 10);
        }
        if (i % 12 == 0) {
            return new int[] {0, 1, 4095, 4096}[(i / 12) % 4];
        }
        return 1 + rnd.nextInt(64 << 10);
    }

    /**
     * Defaults (local files unpacked in the background after ready, other ranks' partitions pulled in the
     * background: both race the first epoch's opens), then every local file unpacked on its first open (8
     * readers racing for the same files) with no pull (remote files fetched from their owner every time).
     */
    @ParameterizedTest(name = "--unpack {0} --prefetch {1}")
    @CsvSource({"background, on", "lazy, off"})
    void everySampleOfEveryEpochChecksOutAndNothingLeaks(String unpack, String prefetch) throws Exception {
        trainOnEveryRank(16, "--unpack", unpack, "--prefetch", prefetch);
    }

    /**
     * Every file fits the cache (the largest is 5 MiB), so every open must succeed; 8 readers per rank make the
     * cache evict while their answers are in flight. Once failed (issue 8): a file evicted between the runtime's
     * answer and the shim's open was asked for again at most 3 times, then the reader got ENOENT for a file that
     * exists; answers are now pins the eviction cannot remove (cache/CachePins). Soak only (torch, 4 ranks): the
     * normal suite's CacheEvictionTest covers the same race in a few seconds.
     */
    @Test
    void aCacheJustLargerThanTheLargestFileStillServesEveryOpen() throws Exception {
        assumeTrue(SOAK, "soak only (FANSTORE_SOAK=1); CacheEvictionTest covers the eviction race in the normal"
                + " suite");
        trainOnEveryRank(6);
    }

    private static void trainOnEveryRank(int cacheMb, String... options) throws Exception {
        Map<String, Integer> mix = mixSeenByRank0();
        for (String kind : List.of("local raw", "local lz4", "remote raw", "remote lz4")) {
            assertTrue(mix.getOrDefault(kind, 0) >= FILES / 16, "too few " + kind + " files for rank 0: " + mix);
        }
        String job = "tload" + System.nanoTime();
        Path local = Files.createDirectories(work.resolve("local-" + job));
        Path done = Files.createDirectories(work.resolve("done-" + job));
        long t0 = System.nanoTime();
        List<String> args = new ArrayList<>(List.of("run", "--ranks", Integer.toString(RANKS), "--data",
                data.toString(), "--local-dir", local.toString(), "--cache-mb", Integer.toString(cacheMb)));
        args.addAll(List.of(options));
        args.addAll(List.of("--", PYTHON, FanstoreProcess.repo().resolve("tests/load/training_load.py").toString(),
                "rank", "--expected", expectedFile.toString(), "--local-dir", local.toString(), "--done-dir",
                done.toString(), "--procs", Integer.toString(PROCS), "--workers", Integer.toString(WORKERS),
                "--epochs", Integer.toString(EPOCHS)));
        FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job),
                SOAK ? 1800 : 300, args.toArray(String[]::new)));
        double seconds = (System.nanoTime() - t0) / 1e9;
        String output = "stdout:\n" + r.stdout() + "\nstderr:\n" + r.stderr();
        assertTrue(r.stderr().contains("fanstore: ready: " + RANKS + " ranks, " + FILES + " files"), output);

        Matcher m = EPOCH.matcher(r.stdout());
        int epochs = 0;
        long samples = 0;
        long bytes = 0;
        while (m.find()) {
            epochs++;
            String which = "process " + m.group(1) + " epoch " + m.group(2) + "\n" + output;
            assertEquals(FILES, Integer.parseInt(m.group(3)), "samples, " + which);
            assertEquals(FILES, Integer.parseInt(m.group(4)), "distinct files, " + which);
            assertEquals(totalBytes, Long.parseLong(m.group(5)), "bytes read, " + which);
            assertEquals("0 0 0 0", m.group(6) + " " + m.group(7) + " " + m.group(8) + " " + m.group(9),
                    "mismatches, errors, descriptors left after a sample, descriptors left after the epoch: "
                            + which);
            samples += Long.parseLong(m.group(3));
            bytes += Long.parseLong(m.group(5));
        }
        assertEquals(RANKS * PROCS * EPOCHS, epochs, "one EPOCH line per process and epoch\n" + output);

        Matcher rt = RUNTIME.matcher(r.stdout());
        Map<Integer, Long> peakKb = new TreeMap<>();
        Map<Integer, String> rssNow = new TreeMap<>();
        while (rt.find()) {
            peakKb.put(Integer.parseInt(rt.group(1)), Long.parseLong(rt.group(3)));
            rssNow.put(Integer.parseInt(rt.group(1)), String.format("%d (anon %d, file %d, shmem %d)",
                    Long.parseLong(rt.group(4)) >> 10, Long.parseLong(rt.group(5)) >> 10,
                    Long.parseLong(rt.group(6)) >> 10, Long.parseLong(rt.group(7)) >> 10));
        }
        assertEquals(RANKS, peakKb.size(), "one RUNTIME line per rank\n" + output);
        peakKb.values().forEach(kb -> assertTrue(kb > 0, "VmHWM read\n" + output));

        assertFalse(Files.exists(JobLayout.sharedMemoryView(job).shmRoot()), "shared memory left behind");
        assertFalse(Files.exists(RankDirectory.JOB_ROOT.in(local, JobLayout.currentUid(), job)),
                "local directory left behind");
        try (Stream<Path> left = Files.list(local)) {
            assertEquals(List.of(), left.toList(), "anything left in the local directory");
        }
        Await.until(Duration.ofSeconds(5), () -> survivorsOf(job).isEmpty(),
                "processes of the job outlived it: " + survivorsOf(job));

        StringBuilder peaks = new StringBuilder();
        peakKb.forEach((rank, kb) -> peaks.append(String.format(" rank %d %.0f MiB;", rank, kb / 1024.0)));
        System.out.printf("LOAD: %d ranks x %d processes x %d forked workers x %d epochs, %d files (%.1f MiB; rank 0"
                        + " sees %s), cache %d MiB %s: %d samples, %.1f MiB checksummed, 0 mismatches, 0 errors,"
                        + " 0 descriptors left, nothing left in /dev/shm or the local directory; %.1f s;"
                        + " runtime peak memory (VmHWM):%s resident at the end, MiB: %s%n", RANKS, PROCS, WORKERS,
                EPOCHS, FILES, totalBytes / 1048576.0, mix, cacheMb, String.join(" ", options), samples,
                bytes / 1048576.0, seconds, peaks, rssNow);
    }

    /** How rank 0 meets the files: held by it or by another rank, stored raw or LZ4 (from the partitions). */
    private static Map<String, Integer> mixSeenByRank0() throws IOException {
        Map<String, Integer> mix = new TreeMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            try (PartitionReader reader = PartitionReader.open(data.resolve(String.format("part-%05d.fsp", p)))) {
                for (PartitionEntry e : reader.entries()) {
                    if (e.isFile()) {
                        String kind = (p % RANKS == 0 ? "local " : "remote ")
                                + (e.codec() == PartitionDescriptor.CODEC_RAW ? "raw" : "lz4");
                        mix.merge(kind, 1, Integer::sum);
                    }
                }
            }
        }
        return mix;
    }

    private static List<String> survivorsOf(String job) {
        return ProcessHandle.allProcesses().filter(ProcessHandle::isAlive)
                .map(p -> p.pid() + " " + p.info().commandLine().orElse(""))
                .filter(c -> c.contains(job) || c.contains(expectedFile.toString())).toList();
    }
}
