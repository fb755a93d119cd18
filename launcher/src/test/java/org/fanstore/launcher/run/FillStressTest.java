package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.fanstore.prep.format.Manifest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The fill path under stress (runtime/.../fill/README.md): 20,000 small files (1 B to 64 KiB, log-uniform, and a
 * few of 1-3 MiB) in nested directories, prepped raw and LZ4, read right after ready by {@link FillReader} on every
 * rank: forked processes with several threads each, every process reading every file once in its own random order
 * through read(), pread, mmap and open/close + buffered io, SHA-256 of every byte against the source tree's. The
 * dataset is behind a rate-limited bindfs (FUSE, direct_io), so a rank's stage-in from the "shared FS" takes a few
 * seconds and, with the new fill path, runs while the readers read, as do the pulls of the peer's partitions and
 * the shared-FS reads. One variant bounds {@code --local-capacity} at about half the dataset: some partitions are
 * then streamed (read per access from a peer or the shared FS), and the partition bytes a node keeps (sampled while
 * the job runs) must stay within the bound. The matrix runs {@code -Dfanstore.stressRounds=N} times (default 1,
 * the bounded CI run, which keeps 1 rank raw and 2 ranks LZ4; FANSTORE_SOAK=1: the whole matrix, 5 rounds).
 */
class FillStressTest {
    private static final int FILES = 20_000;
    private static final int LARGE = 12;
    private static final int PROCS = 2;
    private static final int THREADS = 3;
    /** The shared FS's read rate: the ~140 MiB of partitions take ~4 s to copy. */
    private static final String READ_RATE = "36M";
    private static final int ROUNDS = Integer.getInteger("fanstore.stressRounds", Soak.ON ? 5 : 1);

    @TempDir
    static Path work;
    static Path mnt;
    static boolean mounted;
    static Path listing;
    static Path program;
    static long datasetBytes;

    @BeforeAll
    static void prepare() throws Exception {
        Path src = work.resolve("src/ds");
        listing = work.resolve("sha256.txt");
        datasetBytes = stressSet(src, listing, FILES, LARGE, 20_000);
        Path shared = Files.createDirectories(work.resolve("shared"));
        for (String compress : List.of("none", "lz4")) {
            RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 300, "prep", "--input", src.toString(), "--output",
                    shared.resolve(compress + ".fs").toString(), "--partitions", "8", "--compress", compress));
        }
        program = FillReader.install(work);
        mnt = Files.createDirectories(work.resolve("mnt"));
        mounted = bindfs(shared, mnt, READ_RATE);
        Assumptions.assumeTrue(mounted, "bindfs could not mount " + shared);
        System.out.printf("fill stress: %d files, %.1f MiB raw, shared FS read rate %s, %d round(s)%n",
                FILES + LARGE, datasetBytes / 1048576.0, READ_RATE, ROUNDS);
    }

    /**
     * Writes the stress set under {@code src}: {@code files} small files (1 B to 64 KiB, log-uniform) in nested
     * directories and {@code large} of 1-3 MiB, half incompressible; their SHA-256 listing goes to {@code listing}
     * (FillReader's input). Returns the raw bytes.
     */
    static long stressSet(Path src, Path listing, int files, int large, long seed) throws IOException {
        Random rnd = new Random(seed);
        try (FillReader.Listing out = new FillReader.Listing(listing)) {
            for (int i = 0; i < files + large; i++) {
                int size = i < files ? (int) Math.max(1, Math.round(Math.pow(65536, rnd.nextDouble())))
                        : (1 << 20) + rnd.nextInt(2 << 20);
                byte[] body = new byte[size];
                if (i % 2 == 0) {
                    rnd.nextBytes(body); // incompressible: stays raw even with lz4
                } else {
                    for (int k = 0; k < size; k++) {
                        body[k] = (k & 255) < 64 ? (byte) rnd.nextInt() : (byte) "label,0.5,class\n".charAt(k & 15);
                    }
                }
                String rel = i < files ? String.format("a%02d/b%d/c%d/f%05d.bin", i % 50, i % 4, i % 3, i)
                        : String.format("large/l%02d.bin", i - files);
                Path f = src.resolve(rel);
                Files.createDirectories(f.getParent());
                Files.write(f, body);
                out.add(rel, body);
            }
            return out.bytes();
        }
    }

    @AfterAll
    static void unmount() throws Exception {
        if (mounted) {
            unmountFuse(mnt);
        }
    }

    /** A read-only bindfs of {@code from} at {@code to}, reads limited to {@code rate} bytes/s, no page cache. */
    static boolean bindfs(Path from, Path to, String rate) throws Exception {
        Process p = new ProcessBuilder("bindfs", "-o", "ro,direct_io", "--read-rate=" + rate, from.toString(),
                to.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            System.out.println("bindfs: " + out);
            return false;
        }
        return true;
    }

    /** Unmounts a FUSE mount, lazily if something still holds it. */
    static void unmountFuse(Path at) throws Exception {
        for (int i = 0; i < 10; i++) {
            if (new ProcessBuilder("fusermount", "-u", at.toString()).redirectErrorStream(true).start()
                    .waitFor() == 0) {
                return;
            }
            Thread.sleep(200);
        }
        new ProcessBuilder("umount", "-l", at.toString()).inheritIO().start().waitFor();
    }

    static Stream<Arguments> matrix() {
        List<Arguments> all = new ArrayList<>();
        for (int round = 1; round <= ROUNDS; round++) {
            for (int ranks : new int[] {1, 2}) {
                for (String compress : List.of("none", "lz4")) {
                    all.add(Arguments.of(round, ranks, compress));
                }
            }
        }
        return all.stream();
    }

    static Stream<Arguments> capacityMatrix() {
        List<Arguments> all = new ArrayList<>();
        for (int round = 1; round <= ROUNDS; round++) {
            all.add(Arguments.of(round, 2, "none"));
        }
        return all.stream();
    }

    @ParameterizedTest(name = "round {0}: {1} rank(s), compress {2}")
    @MethodSource("matrix")
    void everyReaderReadsEveryFileRightWhileTheFillRuns(int round, int ranks, String compress) throws Exception {
        Soak.orBounded(ranks == 1 == compress.equals("none"), ranks + " rank(s), " + compress);  // 1 raw, 2 LZ4
        job(round, ranks, compress, null);
    }

    @ParameterizedTest(name = "round {0}: {1} rank(s), compress {2}, --local-capacity half the dataset")
    @MethodSource("capacityMatrix")
    void withHalfTheDatasetAsCapacityStreamedPartitionsReadRightToo(int round, int ranks, String compress)
            throws Exception {
        Path data = mnt.resolve(compress + ".fs");
        job(round, ranks, compress, Manifest.read(data).storedBytes() / 2);
    }

    private static void job(int round, int ranks, String compress, Long capacity) throws Exception {
        Path data = mnt.resolve(compress + ".fs");
        String job = "tfill" + ranks + compress + (capacity == null ? "" : "cap") + System.nanoTime();
        Path local = Files.createDirectories(work.resolve("local"));
        Path out = work.resolve("out-" + job);
        Path stats = work.resolve("stats-" + job + ".json");
        List<String> args = new ArrayList<>(List.of("run", "--ranks", Integer.toString(ranks), "--data",
                data.toString(), "--local-dir", local.toString(), "--stats", stats.toString()));
        if (capacity != null) {
            args.addAll(List.of("--local-capacity", Long.toString(capacity)));
        }
        args.add("--");
        args.addAll(List.of(FillReader.command(program, "/fanstore/ds", listing, out, PROCS, THREADS, round)
                .split(" ")));
        KeptBytes kept = new KeptBytes(local.resolve("fanstore-" + JobLayout.currentUid() + "-" + job));
        Thread sampler = new Thread(kept::run, "kept-bytes-sampler");
        sampler.start();
        FanstoreProcess.Result r;
        try {
            r = FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 240, args.toArray(String[]::new));
        } finally {
            kept.stop.set(true);
            sampler.join();
        }
        String context = "exit " + r.status() + "\n" + r.stderr();
        List<FillReader.Result> results = FillReader.assertAllPerfect(out, PROCS * ranks, FILES + LARGE, context);
        assertEquals(0, r.status(), context);
        long slowest = results.stream().mapToLong(FillReader.Result::maxMillis).max().orElse(0);
        Matcher ready = Pattern.compile("fanstore: ready: .*").matcher(r.stderr());
        System.out.printf("fill stress round %d, %d rank(s), %s%s: %d readers x %d files right in %.1f s (job),"
                + " slowest file %d ms, most partition bytes kept by a rank %.1f MiB; %s%n", round, ranks, compress,
                capacity == null ? "" : ", capacity " + capacity, results.size(), FILES + LARGE, r.millis() / 1e3,
                slowest, kept.peak() / 1048576.0, ready.find() ? ready.group() : "no ready line");
        if (capacity == null && compress.equals("none")) {
            // riders whose ranges had landed were answered on the dispatcher (runtime/.../open/README.md), and every
            // byte they read checked out above
            long onDispatcher = JsonField.first(Files.readString(stats), "remote_on_dispatcher");
            assertTrue(onDispatcher > 0, "no rider answered on the dispatcher\n" + Files.readString(stats));
            System.out.printf("fill stress round %d, %d rank(s): rank 0's riders answered on the dispatcher: %d%n",
                    round, ranks, onDispatcher);
        }
        if (capacity != null) {
            assertTrue(kept.peak() > 0, "no partition copy seen under " + kept.root + "\n" + context);
            assertTrue(kept.peak() <= capacity, "a rank kept " + kept.peak() + " bytes of partitions, more than"
                    + " --local-capacity " + capacity + " (per rank: " + kept.peaks + ")\n" + context);
        }
    }

    /**
     * Samples, every 100 ms while a job runs, the bytes of partition copies ({@code *.fsp} files, each inode once;
     * decoded copies {@code .fsp.raw} are not partition bytes) in each rank's local directory, and keeps the peak.
     */
    private static final class KeptBytes {
        final Path root;
        final AtomicBoolean stop = new AtomicBoolean();
        final Map<String, Long> peaks = new TreeMap<>();

        KeptBytes(Path root) {
            this.root = root;
        }

        synchronized long peak() {
            return peaks.values().stream().mapToLong(Long::longValue).max().orElse(0);
        }

        void run() {
            while (!stop.get()) {
                sample();
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        private void sample() {
            if (!Files.isDirectory(root)) {
                return;
            }
            try (Stream<Path> ranks = Files.list(root)) {
                for (Path rank : ranks.filter(Files::isDirectory).toList()) {
                    long bytes = 0;
                    Set<Object> seen = new HashSet<>();
                    try (Stream<Path> s = Files.walk(rank, 2)) {
                        for (Path p : s.filter(f -> f.getFileName().toString().endsWith(".fsp")).toList()) {
                            try {
                                BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
                                if (a.isRegularFile() && seen.add(a.fileKey())) {
                                    bytes += a.size();
                                }
                            } catch (IOException gone) {
                                // renamed or removed between the listing and the look
                            }
                        }
                    }
                    synchronized (this) {
                        peaks.merge(rank.getFileName().toString(), bytes, Math::max);
                    }
                }
            } catch (IOException | java.io.UncheckedIOException gone) {
                // the job's directories come and go while it starts and ends
            }
        }
    }
}
