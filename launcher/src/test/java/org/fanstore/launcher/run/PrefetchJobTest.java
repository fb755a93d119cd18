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
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prefetch (remote partitions pulled to local storage after ready) end to end: 2 real rank JVMs, real MPJ, and
 * an unmodified {@code sha256sum} reading every file through the shim on rank 0, once at once (while the pull
 * runs) and once after the rank reports the pull finished ({@code $FANSTORE_SHM_DIR/prefetched}). The dataset
 * is LZ4-compressed so nothing is unpacked to the local directory: its partitions are all it holds.
 */
class PrefetchJobTest {
    @TempDir
    static Path work;

    /** "/fanstore/ds/..." -> SHA-256 of the source bytes. */
    static final Map<String, String> expected = new TreeMap<>();
    static Path data;
    static Path paths;
    /** Stored bytes of part-0000i.fsp. */
    static final long[] partBytes = new long[4];

    @BeforeAll
    static void prepare() throws Exception {
        Path src = work.resolve("src/ds");
        Random rnd = new Random(11);
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        for (int i = 0; i < 64; i++) {
            // half random, half text in every 4 KiB: compressible enough that LZ4 is kept (~2x)
            byte[] body = new byte[(96 << 10) + (i * 7919) % (64 << 10)];
            for (int k = 0; k < body.length; k++) {
                body[k] = (k & 4095) < 2048 ? (byte) rnd.nextInt() : (byte) "label,0.5,class\n".charAt(k % 16);
            }
            Path f = src.resolve("d" + i % 4 + "/f" + i + ".bin");
            Files.createDirectories(f.getParent());
            Files.write(f, body);
            expected.put("/fanstore/ds/d" + i % 4 + "/f" + i + ".bin", HexFormat.of().formatHex(sha.digest(body)));
        }
        data = work.resolve("ds.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                data.toString(), "--partitions", "4", "--compress", "lz4"));
        paths = work.resolve("paths.txt");
        Files.write(paths, expected.keySet(), StandardCharsets.UTF_8);
        for (int p = 0; p < 4; p++) {
            partBytes[p] = Files.size(data.resolve(String.format("part-%05d.fsp", p)));
        }
    }

    /** Reads everything through the shim, waits for this rank's pull to finish, reads everything again. */
    private static String twoPasses() {
        return "xargs sha256sum < " + paths + " | sed 's/^/PASS1 /';"
                + " while [ ! -e \"$FANSTORE_SHM_DIR/prefetched\" ]; do sleep 0.1; done;"
                + " xargs sha256sum < " + paths + " | sed 's/^/PASS2 /'";
    }

    private static Map<String, String> pass(String stdout, String name) {
        Map<String, String> got = new TreeMap<>();
        for (String line : stdout.split("\n")) {
            if (line.startsWith(name + " ")) {
                String[] f = line.substring(name.length() + 1).split(" +", 2);
                got.put(f[1], f[0]);
            }
        }
        return got;
    }

    private static FanstoreProcess.Result run(String job, Path localDir, String... options) throws Exception {
        List<String> args = new ArrayList<>(List.of("run", "--ranks", "2", "--data", data.toString(),
                "--only-rank", "0", "--local-dir", localDir.toString()));
        args.addAll(List.of(options));
        return FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job, "FANSTORE_VERBOSE", "1"), 240,
                args.toArray(String[]::new));
    }

    @Test
    void onlyWhatFitsTheBudgetIsKeptAndEveryFileStillReadsBack() throws Exception {
        long min = Math.min(Math.min(partBytes[0], partBytes[1]), Math.min(partBytes[2], partBytes[3]));
        long max = Math.max(Math.max(partBytes[0], partBytes[1]), Math.max(partBytes[2], partBytes[3]));
        long budget = max + min / 2;
        assertTrue(2 * min > budget, "partitions too uneven for this test: " + java.util.Arrays.toString(partBytes));
        String job = "tpbudget" + System.nanoTime();
        try {
            FanstoreProcess.Result r = RunJobTest.ok(run(job, work, "--local-capacity", Long.toString(budget),
                    "--keep-local", "--", "sh", "-c", twoPasses()));
            assertEquals(expected, pass(r.stdout(), "PASS1"), r.stderr());
            assertEquals(expected, pass(r.stdout(), "PASS2"), r.stderr());
            List<Path> parts = partsDirs(work, job);
            assertEquals(2, parts.size(), "one parts directory per rank: " + parts);
            for (Path dir : parts) {
                // any two partitions exceed the budget: each rank keeps one, the first of its own (0 or 1)
                List<String> names = names(dir);
                assertEquals(1, names.size(), "one kept partition in " + dir + ": " + names);
                assertTrue(partIndex(names.get(0)) < 2, dir + ": " + names);
            }
            assertTrue(r.stderr().contains("fanstore rank 0: fill done in ")
                    && r.stderr().contains(": 1 of 1 kept partitions local"), r.stderr());
            // the decoded copy of the pulled partition (~2x its stored bytes) does not fit what is left of the budget
            assertTrue(r.stderr().contains("no room left in --local-capacity for the"), r.stderr());
        } finally {
            removeJob(work, job);
        }
    }

    @Test
    void aFullLocalDiskDuringPrefetchNeverFailsARead() throws Exception {
        assumeTrue(JobLayout.currentUid() == 0, "mounting a small tmpfs needs root");
        Path small = Files.createDirectories(work.resolve("small"));
        // both ranks' partitions take ~6 MiB of the 8: the pulls (another 6) must run out of space
        assertEquals(0, new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", small.toString())
                .inheritIO().start().waitFor());
        String job = "tpfull" + System.nanoTime();
        try {
            FanstoreProcess.Result r = RunJobTest.ok(run(job, small, "--local-capacity", "1G", "--keep-local",
                    "--", "sh", "-c", twoPasses()));
            assertEquals(expected, pass(r.stdout(), "PASS1"), r.stderr());
            assertEquals(expected, pass(r.stdout(), "PASS2"), r.stderr());
            // the landing write's own failure, naming the pull file: ".fill-part-N.fsp at OFFSET: No space left ..."
            assertTrue(Pattern.compile("stopped: cannot write \\S+/\\.fill-part-\\d+\\.fsp at \\d+:"
                    + " No space left on device").matcher(r.stderr()).find(), r.stderr());
            for (Path dir : partsDirs(small, job)) {
                try (Stream<Path> s = Files.list(dir)) {
                    // only a pull file that files were published from (read in place) may stay, and it says so
                    for (Path left : s.filter(p -> p.getFileName().toString().startsWith(".fill-")).toList()) {
                        String name = left.getFileName().toString();
                        assertTrue(r.stderr().contains(name + " stays until the job ends")
                                || Files.exists(left.resolveSibling(name.substring(".fill-".length())))
                                && Files.isSameFile(left, left.resolveSibling(name.substring(".fill-".length()))),
                                "temporary file left by an abandoned pull: " + left + "\n" + r.stderr());
                    }
                }
            }
        } finally {
            removeJob(small, job);
            new ProcessBuilder("umount", "-l", small.toString()).inheritIO().start().waitFor();
        }
    }

    /**
     * The same full disk with files stored raw, as most image datasets are: a first pass reads them in place (slices
     * of local copies, and of the pull files for riders), a second with sha256sum, which needs plain files that are
     * unpacked into the same full directory. Every read must still be right: an unpack that finds no room copies
     * the file into the tmpfs cache instead (it used to fail the read with ENOSPC), and a pull file kept for its
     * riders gives back every page they do not read.
     */
    @Test
    void aFullLocalDiskFailsNoReadOfRawFilesEitherAndKeptPullFilesShrink() throws Exception {
        assumeTrue(JobLayout.currentUid() == 0, "mounting a small tmpfs needs root");
        Path src = work.resolve("rawsrc/raw");
        Map<String, String> sums = new TreeMap<>();
        // incompressible: stored raw, so riders read it in place
        RandomFiles.write(src, "/fanstore/raw", 48, 128 << 10, 12, i -> "d" + i % 4 + "/f" + i + ".bin", sums);
        Path raw = work.resolve("raw.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                raw.toString(), "--partitions", "4"));
        Path list = Files.write(work.resolve("raw-paths.txt"), sums.keySet(), StandardCharsets.UTF_8);
        Path small = Files.createDirectories(work.resolve("small-raw"));
        // 6 MiB of partitions on 8 MiB: the pulls (3 MiB per rank) run out of space while the first pass reads
        assertEquals(0, new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", small.toString())
                .inheritIO().start().waitFor());
        String job = "tpfullraw" + System.nanoTime();
        String inPlace = "import hashlib, os, sys\n"
                + "for p in open(sys.argv[1]).read().split():\n"
                + "    fd = os.open(p, os.O_RDONLY); h = hashlib.sha256()\n"
                + "    while True:\n"
                + "        b = os.read(fd, 65536)\n"
                + "        if not b: break\n"
                + "        h.update(b)\n"
                + "    os.close(fd); print('PASS1', h.hexdigest(), p)\n";
        Path py = Files.writeString(work.resolve("inplace.py"), inPlace);
        try {
            List<String> args = List.of("run", "--ranks", "2", "--data", raw.toString(), "--only-rank", "0",
                    "--local-dir", small.toString(), "--local-capacity", "1G", "--keep-local", "--", "sh", "-c",
                    "/usr/bin/python3 " + py + " " + list + "; xargs sha256sum < " + list + " | sed 's/^/PASS2 /'");
            FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job,
                    "FANSTORE_VERBOSE", "1"), 240, args.toArray(String[]::new)));
            Map<String, String> first = new TreeMap<>();
            for (String line : r.stdout().split("\n")) {
                if (line.startsWith("PASS1 ")) {
                    String[] f = line.split(" ");
                    first.put(f[2], f[1]);
                }
            }
            assertEquals(sums, first, r.stderr());
            assertEquals(sums, pass(r.stdout(), "PASS2"), r.stderr());
            assertFalse(r.stderr().contains("sha256sum:") || r.stderr().contains("Traceback"), r.stderr());
            Matcher kept = Pattern.compile("(\\.fill-part-\\d+\\.fsp) stays until the job ends.*; its other (\\d+)"
                    + " bytes are freed").matcher(r.stderr());
            while (kept.find()) {   // riders are timing-dependent: each kept file present must have shrunk
                long freed = Long.parseLong(kept.group(2));
                assertTrue(freed > 0, kept.group());
                for (Path dir : partsDirs(small, job)) {
                    Path f = dir.resolve(kept.group(1));
                    if (Files.exists(f)) {
                        long size = Files.size(f);
                        Process stat = new ProcessBuilder("stat", "-c", "%b", f.toString()).start();
                        long allocated = Long.parseLong(new String(stat.getInputStream().readAllBytes(),
                                StandardCharsets.US_ASCII).trim()) * 512;
                        assertTrue(allocated <= size - freed + 4096, f + ": " + allocated + " bytes allocated of "
                                + size + " after freeing " + freed);
                    }
                }
            }
        } finally {
            removeJob(small, job);
            new ProcessBuilder("umount", "-l", small.toString()).inheritIO().start().waitFor();
        }
    }

    @Test
    void afterThePullASecondPassFetchesNothingRemotely() throws Exception {
        String job = "tplocal" + System.nanoTime();
        // a 2 MiB cache cannot keep the first pass's files: the second pass materialises them again
        FanstoreProcess.Result r = RunJobTest.ok(run(job, work, "--cache-mb", "2", "--", "sh", "-c", twoPasses()));
        assertEquals(expected, pass(r.stdout(), "PASS1"), r.stderr());
        assertEquals(expected, pass(r.stdout(), "PASS2"), r.stderr());
        // every partition kept: the fill says so when it ends, and nothing was read twice from a source
        assertTrue(r.stderr().contains("fanstore rank 0: fill done in ")
                && r.stderr().contains(": 4 of 4 kept partitions local"), r.stderr());
    }

    @Test
    void prefetchOffKeepsTodaysBehaviour() throws Exception {
        String job = "tpoff" + System.nanoTime();
        try {
            FanstoreProcess.Result r = RunJobTest.ok(run(job, work, "--prefetch", "off", "--keep-local", "--", "sh",
                    "-c", "xargs sha256sum < " + paths + " | sed 's/^/PASS1 /'; sleep 2;"
                            + " [ -e \"$FANSTORE_SHM_DIR/prefetched\" ] && echo OWN-SHARE-DONE"));
            assertEquals(expected, pass(r.stdout(), "PASS1"), r.stderr());
            // the fill keeps the rank's own share only, and says so when it has ended
            assertTrue(r.stdout().contains("OWN-SHARE-DONE"), r.stdout());
            assertTrue(r.stderr().contains(": 2 of 2 kept partitions local"), r.stderr());
            for (Path dir : partsDirs(work, job)) {
                assertEquals(2, names(dir).size(), "only the held partitions in " + dir + ": " + names(dir));
            }
        } finally {
            removeJob(work, job);
        }
    }

    private static int partIndex(String name) {
        return Integer.parseInt(name.substring(5, 10));
    }

    /** Every rank's partition directory of the job under localDir (found by content, not by rank-dir name). */
    private static List<Path> partsDirs(Path localDir, String job) throws IOException {
        Path root = localDir.resolve("fanstore-" + JobLayout.currentUid() + "-" + job);
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(p -> Files.isDirectory(p) && p.getFileName().toString().equals("parts")).toList();
        }
    }

    /**
     * The partition copies in dir. A pull file readers read in place keeps its name beside the finished copy
     * (docs/slices.md, "riders"); it must be a second name of that copy, not bytes of its own.
     */
    private static List<String> names(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            List<Path> all = s.filter(p -> p.getFileName().toString().endsWith(".fsp")).toList();
            for (Path p : all) {
                String n = p.getFileName().toString();
                if (n.startsWith(".fill-")) {
                    Path copy = p.resolveSibling(n.substring(".fill-".length()));
                    assertTrue(Files.exists(copy) && Files.isSameFile(p, copy), p + " is not a name of " + copy);
                }
            }
            return all.stream().map(p -> p.getFileName().toString()).filter(n -> !n.startsWith(".")).sorted()
                    .toList();
        }
    }

    /** What --keep-local left: the job's local and shared-memory roots. */
    static void removeJob(Path localDir, String job) throws IOException {
        String root = "fanstore-" + JobLayout.currentUid() + "-" + job;
        for (Path p : List.of(localDir.resolve(root), Path.of("/dev/shm", root))) {
            if (Files.exists(p)) {
                try (Stream<Path> s = Files.walk(p)) {
                    for (Path q : s.sorted(Comparator.reverseOrder()).toList()) {
                        Files.delete(q);
                    }
                }
            }
        }
    }
}
