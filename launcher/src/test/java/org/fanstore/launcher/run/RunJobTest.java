package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.fanstore.runtime.layout.RankDirectory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * `fanstore run` end to end with real rank JVMs, a real MPJ world, real shared memory: a C client on rank 0
 * reads every file of the dataset through the runtime's table and protocol (as the shim does), for 1, 2 and 4
 * ranks, compressed and not, so files owned by every rank are fetched remotely.
 */
class RunJobTest {
    @TempDir
    static Path work;

    /** key (mount-relative) -> "hash size" of the source bytes. */
    static final Map<String, String> expected = new TreeMap<>();
    static Path plain;
    static Path lz4;

    @BeforeAll
    static void prepareDatasets() throws Exception {
        Path src = work.resolve("src/ds");
        Random rnd = new Random(7);
        int[] sizes = {0, 1, 4095, 128 << 10, 300_000, 2 << 20, (3 << 20) + 5};
        for (int d = 0; d < 4; d++) {
            for (int i = 0; i < 9; i++) {
                byte[] body = new byte[sizes[(d + i) % sizes.length]];
                if (i % 2 == 0) {
                    rnd.nextBytes(body);
                } else {
                    for (int k = 0; k < body.length; k++) {
                        body[k] = (byte) ("label,0.5,class\n".charAt(k % 16));
                    }
                }
                String rel = "d" + d + "/sub" + (i % 3) + "/f" + i + ".bin";
                Path f = src.resolve(rel);
                Files.createDirectories(f.getParent());
                Files.write(f, body);
                expected.put("ds/" + rel, String.format("%016x %d", fnv(body), body.length));
            }
        }
        Files.createDirectories(src.resolve("empty/dir"));
        plain = work.resolve("plain.fs");
        lz4 = work.resolve("lz4.fs");
        ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output", plain.toString(),
                "--partitions", "7"));
        ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output", lz4.toString(),
                "--partitions", "5", "--compress", "lz4"));
        Files.write(work.resolve("keys.txt"), expected.keySet(), StandardCharsets.UTF_8);
    }

    static long fnv(byte[] b) {
        long h = 0xcbf29ce484222325L;
        for (byte x : b) {
            h ^= x & 0xff;
            h *= 0x100000001b3L;
        }
        return h;
    }

    static FanstoreProcess.Result ok(FanstoreProcess.Result r) {
        assertEquals(0, r.status(), "stdout:\n" + r.stdout() + "\nstderr:\n" + r.stderr());
        return r;
    }

    static String client() {
        return FanstoreProcess.nativeBuild().resolve("fs_open_client").toString();
    }

    private static Map<String, String> readBack(String stdout) {
        Map<String, String> got = new TreeMap<>();
        for (String line : stdout.split("\n")) {
            if (line.startsWith("ERR ")) {
                got.put(line.substring(line.indexOf(' ', 4) + 1), line);
            } else if (!line.isBlank() && !line.startsWith("CACHE ") && !line.startsWith("HOT ")
                    && !line.startsWith("GONE ")) {
                String[] f = line.split(" ", 3);
                got.put(f[2], f[0] + " " + f[1]);
            }
        }
        return got;
    }

    @ParameterizedTest(name = "{0} ranks, {1}, unpack {2}")
    @CsvSource({"1, plain, lazy", "2, lz4, background", "4, plain, eager", "4, lz4, background"})
    void everyFileReadsBackThroughTheRuntime(int ranks, String which, String unpack) throws Exception {
        Path data = which.equals("lz4") ? lz4 : plain;
        String job = "t" + ranks + which + System.nanoTime();
        FanstoreProcess.Result r = ok(FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 240, "run",
                "--ranks", Integer.toString(ranks), "--data", data.toString(), "--only-rank", "0",
                "--unpack", unpack, "--local-dir", work.toString(), "--", "sh", "-c",
                client() + " \"$FANSTORE_SHM_DIR\" " + work.resolve("keys.txt")));
        assertEquals(expected, readBack(r.stdout()), r.stderr());
        assertTrue(r.stderr().contains("fanstore: ready: " + ranks + " ranks, " + expected.size() + " files"),
                r.stderr());
        assertNothingLeft(job);
    }

    /** --unpack eager on nodes whose --local-capacity keeps none of their share: nothing to unpack, all served. */
    @ParameterizedTest
    @CsvSource({"plain", "lz4"})
    void eagerUnpackOnNodesThatKeepNothingServesEveryFile(String which) throws Exception {
        String job = "teager0" + which + System.nanoTime();
        FanstoreProcess.Result r = ok(FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 240, "run",
                "--ranks", "2", "--data", (which.equals("lz4") ? lz4 : plain).toString(), "--only-rank", "0",
                "--unpack", "eager", "--local-capacity", "1", "--local-dir", work.toString(), "--", "sh", "-c",
                client() + " \"$FANSTORE_SHM_DIR\" " + work.resolve("keys.txt")));
        assertEquals(expected, readBack(r.stdout()), r.stderr());
        assertTrue(r.stderr().contains("each node keeps 0 B locally"), r.stderr());
        assertNothingLeft(job);
    }

    @Test
    void theCacheNeverExceedsItsBound() throws Exception {
        String job = "tcache" + System.nanoTime();
        FanstoreProcess.Result r = ok(FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 240, "run",
                "--ranks", "2", "--data", lz4.toString(), "--only-rank", "0", "--cache-mb", "5",
                "--local-dir", work.toString(), "--", "sh", "-c",
                client() + " \"$FANSTORE_SHM_DIR\" " + work.resolve("keys.txt") + " --cache-usage"));
        assertEquals(expected, readBack(r.stdout()));
        long max = r.stdout().lines().filter(l -> l.startsWith("CACHE ")).mapToLong(l -> Long.parseLong(l.substring(6)))
                .max().orElseThrow();
        assertTrue(max <= 5L << 20, "cache held " + max + " bytes, bound is 5 MiB");
        assertTrue(max > 2L << 20, "the cache was used at all: " + max);
    }

    /**
     * A file reopened straight from the cache (no request: the runtime never sees those hits) keeps its place
     * through eviction rounds on its reference bit alone, while files read once are evicted.
     */
    @Test
    void aFileReopenedBehindTheRuntimesBackSurvivesEvictionOnItsReferenceBit() throws Exception {
        String hot = "ds/d3/sub1/f1.bin";  // text (odd i), so LZ4-compressed: served from the cache, never local raw
        assertTrue(expected.get(hot).endsWith(" 300000"), "a small file next to the 2 and 3 MiB ones");
        String job = "thot" + System.nanoTime();
        FanstoreProcess.Result r = ok(FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 240, "run",
                "--ranks", "2", "--data", lz4.toString(), "--only-rank", "0", "--cache-mb", "5",
                "--local-dir", work.toString(), "--", "sh", "-c",
                client() + " \"$FANSTORE_SHM_DIR\" " + work.resolve("keys.txt") + " --cache-usage --hot " + hot));
        assertEquals(expected, readBack(r.stdout()), r.stderr());
        List<String[]> hits = r.stdout().lines().filter(l -> l.startsWith("HOT ")).map(l -> l.split(" "))
                .toList();
        assertEquals(expected.size(), hits.size());
        for (int i = 0; i < hits.size(); i++) {
            String[] h = hits.get(i);
            assertEquals(expected.get(hot), h[3] + " " + h[4], "every byte of the hot file, open " + i);
            assertEquals(hits.get(0)[2], h[2], "same cache file (never evicted and remade), open " + i);
            if (i > 0) {
                assertEquals("direct", h[1], "open " + i + " of the hot file needed no request");
            }
        }
        long max = r.stdout().lines().filter(l -> l.startsWith("CACHE ")).mapToLong(l -> Long.parseLong(l.substring(6)))
                .max().orElseThrow();
        assertTrue(max <= 5L << 20, "cache held " + max + " bytes, bound is 5 MiB");
        String[] gone = r.stdout().lines().filter(l -> l.startsWith("GONE ")).findFirst().orElseThrow().split(" ");
        int evicted = Integer.parseInt(gone[1]);
        int viaCache = Integer.parseInt(gone[2]);
        assertTrue(viaCache >= 8 && evicted >= viaCache / 2,
                "files read once were evicted: " + evicted + " of " + viaCache);
        assertNothingLeft(job);
    }

    @Test
    void aMissingPartitionFailsLoadingAndNamesIt() throws Exception {
        Path broken = work.resolve("broken.fs");
        copyTree(plain, broken);
        Files.delete(broken.resolve("part-00003.fsp"));
        String job = "tmiss" + System.nanoTime();
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 120, "run",
                "--ranks", "2", "--data", broken.toString(), "--local-dir", work.toString(), "--", "true");
        assertNotEquals(0, r.status());
        assertTrue(r.stderr().contains("part-00003.fsp") && r.stderr().contains("rank 1"), r.stderr());
        assertNothingLeft(job);
    }

    @Test
    void aKilledRankStopsTheJobWithinTenSecondsNamingIt() throws Exception {
        String job = "tkill" + System.nanoTime();
        CompletableFuture<FanstoreProcess.Result> running = CompletableFuture.supplyAsync(() -> {
            try {
                return FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 180, "run", "--ranks", "2",
                        "--on-node-loss", "end", "--data", plain.toString(), "--local-dir", work.toString(), "--",
                        "sleep", "120");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, runnable -> new Thread(runnable, "job-under-test").start());
        Path ready = JobLayout.sharedMemoryView(job).readyFile(1);
        Await.until(Duration.ofSeconds(120), () -> Files.exists(ready) || running.isDone(), "job never became ready");
        assertFalse(running.isDone(), () -> "job ended early: " + running.join().stderr());
        ProcessHandle rank1 = ProcessHandle.allProcesses()
                .filter(p -> p.info().commandLine().map(c -> c.contains("--rank=1 ") && c.contains(job)).orElse(false))
                .findFirst().orElseThrow();
        // ps-like tools (and ProcessHandle) show only a command line's first page: a rank's arguments must fit in it
        // under a long install path too, so the runtime's own part stays well under half a page.
        byte[] cmdline = Files.readAllBytes(Path.of("/proc", Long.toString(rank1.pid()), "cmdline"));
        long ours = new String(cmdline, StandardCharsets.UTF_8).replace(FanstoreProcess.repo()
                .toString(), "").length();
        assertTrue(ours < 2048, () -> "rank 1's command line is " + ours + " bytes without the install path: "
                + new String(cmdline, StandardCharsets.UTF_8).replace('\0', ' '));
        // Kill while the job runs, not while it starts: wait for the launcher (rank 1's parent) to have
        // started both ranks' commands.
        ProcessHandle launcher = rank1.parent().orElseThrow();
        Await.until(Duration.ofSeconds(60), () -> launcher.children()
                .filter(p -> p.info().commandLine().map(c -> c.endsWith("sleep 120")).orElse(false)).count() == 2
                || running.isDone(), "the ranks' commands never started");
        assertFalse(running.isDone(), () -> "job ended early: " + running.join().stderr());
        long killedAt = System.nanoTime();
        rank1.destroyForcibly();
        FanstoreProcess.Result r = running.get(60, TimeUnit.SECONDS);
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - killedAt);
        assertNotEquals(0, r.status());
        assertTrue(seconds < 10, "took " + seconds + " s");
        assertTrue(r.stderr().contains("rank 1"), r.stderr());
        assertNothingLeft(job);
    }

    @Test
    void theCommandsOwnStatusIsTheJobsStatus() throws Exception {
        String job = "tstatus" + System.nanoTime();
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 120, "run", "--ranks",
                "2", "--data", plain.toString(), "--local-dir", work.toString(), "--", "sh", "-c",
                // Rank 1 fails 3 s after rank 0 on purpose: "first" is in time, and both exiting at once made the
                // order a coin toss on a loaded machine.
                "[ $FANSTORE_RANK = 0 ] || sleep 3; exit $((FANSTORE_RANK + 6))");
        assertEquals(6, r.status(), "the first failing command's status (rank 0 exits 6, rank 1 exits 7):\n"
                + r.stderr());
        assertNothingLeft(job);
    }

    /**
     * Ctrl-C right as the job becomes ready, so it often lands while the commands start. The grace (60 s) is
     * longer than the 20 s the launcher gets: a SIGTERM lost before setsid made the command's group would leave
     * the command running out its grace. Three rounds, since the moment varies.
     */
    @RepeatedTest(3)
    void ctrlCStopsEverythingAndCleansUp() throws Exception {
        String job = "tint" + System.nanoTime();
        // env: a suite started by a shell without job control inherits SIGINT ignored, which the launcher keeps
        ProcessBuilder pb = new ProcessBuilder("env", "--default-signal=INT",
                FanstoreProcess.repo().resolve("fanstore").toString(), "run",
                "--ranks", "2", "--grace", "60", "--data", plain.toString(), "--local-dir", work.toString(), "--",
                "sleep", "120")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("FANSTORE_JOB_ID", job);
        Process launcher = pb.start();
        try {
            Path ready = JobLayout.sharedMemoryView(job).readyFile(1);
            Await.until(Duration.ofSeconds(120), () -> Files.exists(ready) || !launcher.isAlive(),
                    "job never became ready");
            assertTrue(launcher.isAlive(), "launcher ended before the job became ready");
            // What a terminal's Ctrl-C delivers to the launcher (the script execs java, so this is its pid).
            assertEquals(0, new ProcessBuilder("kill", "-INT", Long.toString(launcher.pid())).start().waitFor());
            assertTrue(launcher.waitFor(20, TimeUnit.SECONDS), "launcher still running 20 s after SIGINT");
            assertNotEquals(0, launcher.exitValue());
        } finally {
            launcher.descendants().forEach(ProcessHandle::destroyForcibly);
            launcher.destroyForcibly();
        }
        assertNothingLeft(job);
        // Killed children are reaped by init once their parent is gone: give that a moment.
        Await.within(Duration.ofSeconds(5), () -> survivorsOf(job).isEmpty());
        assertEquals(List.of(), survivorsOf(job), "processes that survived the launcher");
    }

    @Test
    void badArgumentsGiveOneLineAndStatusTwo() throws Exception {
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of(), 60, "run", "--data", work.resolve("nope.fs")
                .toString(), "--", "true");
        assertEquals(2, r.status(), r.stderr());
        assertTrue(r.stderr().contains("nope.fs") && r.stderr().contains("fanstore prep"), r.stderr());
    }

    private static List<String> survivorsOf(String job) {
        return ProcessHandle.allProcesses().filter(ProcessHandle::isAlive)
                .map(p -> p.pid() + " " + p.info().commandLine().orElse(""))
                .filter(c -> c.contains(job) || c.endsWith("sleep 120")).toList();
    }

    private static void assertNothingLeft(String job) throws IOException {
        assertFalse(Files.exists(JobLayout.sharedMemoryView(job).shmRoot()), "shared memory left behind");
        assertFalse(Files.exists(RankDirectory.JOB_ROOT.in(work, JobLayout.currentUid(), job)),
                "local directory left behind");
    }

    private static void copyTree(Path from, Path to) throws IOException {
        List<Path> all;
        try (var s = Files.walk(from)) {
            all = new ArrayList<>(s.toList());
        }
        for (Path p : all) {
            Path t = to.resolve(from.relativize(p).toString());
            if (Files.isDirectory(p)) {
                Files.createDirectories(t);
            } else {
                Files.copy(p, t);
            }
        }
    }
}
