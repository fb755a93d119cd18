package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.MatchResult;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.CRC32;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * No wrong answer while the runtime works in the background (the default): real reader processes (a forked
 * Python, two threads per process, each process in its own random order) open 20,000 small files in 200
 * directories through the shim under `fanstore run` right after it reports ready, so the background slice
 * publisher, slices published on demand, and files unpacked on demand for mmap (every third open maps the file,
 * every third reads it with pread backwards) interleave on the same files and directories. Every byte is checked
 * against a CRC32 of the source. A directory marked as made before it existed once failed 5-15 such reads with
 * EIO; a slice read past its window would fail the CRC.
 *
 * <p>With 2 ranks the readers also race the pull: partitions rank 0 pulls are published while they read, and for an
 * all-LZ4 dataset each pulled partition gets a decoded copy made on the pull's thread while the same files are
 * opened through the per-open path (a 1 MiB cache, so those keep being decoded and evicted), twice over.
 */
class UnpackRaceTest {
    private static final int FILES = 20_000;
    private static final int DIRS = 200;
    private static final int PROCESSES = 3;
    private static final int THREADS = 2;
    private static final Pattern SUMMARY = Pattern.compile("READER read=\\d+ errors=\\d+ mismatches=\\d+");

    @TempDir
    static Path work;
    static Path plain;
    static Path lz4;
    /** Only the compressible half of the files, LZ4 (every entry compressed: no raw entry a rider could slice). */
    static Path text;
    static Path listing;
    static Path textListing;
    static Path reader;

    @BeforeAll
    static void prepare() throws Exception {
        Path src = work.resolve("src/ds");
        listing = work.resolve("crc.txt");
        textListing = work.resolve("crc-text.txt");
        Random rnd = new Random(11);
        CRC32 crc = new CRC32();
        try (BufferedWriter out = Files.newBufferedWriter(listing, StandardCharsets.UTF_8);
             BufferedWriter textOut = Files.newBufferedWriter(textListing, StandardCharsets.UTF_8)) {
            for (int i = 0; i < FILES; i++) {
                String rel = String.format("d%03d/s%d/f%05d.bin", i % DIRS, i % 3, i);
                byte[] body = new byte[1024 + rnd.nextInt(3073)];
                if (i % 2 == 0) {
                    rnd.nextBytes(body); // incompressible: stays raw even with lz4
                } else {
                    for (int k = 0; k < body.length; k++) {
                        body[k] = (byte) (k * 7 + i);
                    }
                }
                Path f = src.resolve(rel);
                Files.createDirectories(f.getParent());
                Files.write(f, body);
                crc.reset();
                crc.update(body);
                out.write(String.format("%08x %d %s%n", crc.getValue(), body.length, rel));
                if (i % 2 == 1) {
                    Path t = work.resolve("src-text/ds").resolve(rel);
                    Files.createDirectories(t.getParent());
                    Files.write(t, body);
                    textOut.write(String.format("%08x %d %s%n", crc.getValue(), body.length, rel));
                }
            }
        }
        plain = work.resolve("plain.fs");
        lz4 = work.resolve("lz4.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                plain.toString(), "--partitions", "8"));
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                lz4.toString(), "--partitions", "8", "--compress", "lz4"));
        text = work.resolve("text.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input",
                work.resolve("src-text/ds").toString(), "--output", text.toString(), "--partitions", "8",
                "--compress", "lz4"));
        reader = work.resolve("reader.py");
        Files.writeString(reader, READER);
    }

    @ParameterizedTest(name = "{0} rank(s), compress {1}")
    @CsvSource({"1, none", "1, lz4", "2, none", "2, lz4"})
    void everyReadOfEveryProcessIsRightWhileUnpacking(int ranks, String compress) throws Exception {
        Soak.orBounded(ranks == 1 == compress.equals("lz4"), ranks + " rank(s), " + compress);  // 1 LZ4, 2 raw
        Path data = compress.equals("lz4") ? lz4 : plain;
        String job = "trace" + ranks + compress + System.nanoTime();
        FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 240,
                "run", "--ranks", Integer.toString(ranks), "--data", data.toString(), "--local-dir", work.toString(),
                "--", "/usr/bin/python3", reader.toString(), "/fanstore/ds", listing.toString(),
                Integer.toString(PROCESSES), Integer.toString(THREADS)));
        String summary = "READER read=" + FILES + " errors=0 mismatches=0";
        // The ranks share the job's stdout and their lines may interleave mid-line: find the summaries anywhere.
        List<String> lines = SUMMARY.matcher(r.stdout()).results().map(MatchResult::group).toList();
        assertEquals(PROCESSES * ranks, lines.size(), r.stdout() + "\n" + r.stderr());
        for (String line : lines) {
            assertEquals(summary, line, r.stdout() + "\n" + r.stderr());
        }
        assertFalse(r.stderr().contains("cannot unpack") || r.stderr().contains("cannot open"), r.stderr());
    }

    /** Waits (at most 120 s) until both ranks wrote their "prefetched" marker (as bench/after-pull.sh does). */
    private static final String AFTER_PULLS = "i=0; while [ \"$(ls \"$FANSTORE_SHM_DIR\"/../rank-*/prefetched"
            + " 2>/dev/null | wc -l)\" -lt 2 ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done;";

    @Test
    void pulledLz4PartitionsGetDecodedCopiesWhileEveryReadStaysRight() throws Exception {
        String job = "tracepull" + System.nanoTime();
        int files = FILES / 2;
        int rounds = 2;
        try {
            String read = "/usr/bin/python3 " + reader + " /fanstore/ds " + textListing + " ";
            FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 240,
                    "run", "--ranks", "2", "--data", text.toString(), "--local-dir", work.toString(), "--cache-mb",
                    "1", "--keep-local", "--", "sh", "-c", read + PROCESSES + " " + THREADS + " " + rounds + "; "
                            + AFTER_PULLS + " " + read + "1 " + THREADS + " 1"));
            List<String> lines = SUMMARY.matcher(r.stdout()).results().map(MatchResult::group).toList();
            assertEquals((PROCESSES + 1) * 2, lines.size(), r.stdout() + "\n" + r.stderr());
            for (String line : lines) {
                assertTrue(line.equals("READER read=" + files * rounds + " errors=0 mismatches=0")
                        || line.equals("READER read=" + files + " errors=0 mismatches=0"), r.stdout() + r.stderr());
            }
            // every partition, held or pulled, has its decoded copy on both ranks: the pulled ones were made while
            // the first readers ran, and the last pass (after every pull) read them
            Path root = work.resolve("fanstore-" + JobLayout.currentUid() + "-" + job);
            try (Stream<Path> s = Files.walk(root)) {
                List<Path> raw = s.filter(p -> p.getFileName().toString().endsWith(".fsp.raw")).toList();
                assertEquals(16, raw.size(), "8 partitions x 2 ranks: " + raw + "\n" + r.stderr());
            }
            assertFalse(r.stderr().contains("cannot"), r.stderr());
        } finally {
            PrefetchJobTest.removeJob(work, job);
        }
    }

    /**
     * argv: root, listing ("crc32 size relpath" lines), processes, threads[, rounds]. Each process reads every file
     * rounds times (each round in a new random order) and prints one READER line.
     */
    private static final String READER = """
            import mmap, os, random, sys, threading, zlib
            root, listing, procs, nthreads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
            rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 1
            files = [l.split(" ", 2) for l in open(listing).read().splitlines()]

            def read_all(seed):
                # A random order of directories, each read whole in a random order by all threads of the process
                # pulling from one queue: the threads meet in every directory before it exists on disk.
                rnd = random.Random(seed)
                by_dir = {}
                for i, f in enumerate(files):
                    by_dir.setdefault(f[2].rsplit("/", 1)[0], []).append(i)
                dirs = list(by_dir.values())
                rnd.shuffle(dirs)
                order = []
                for _ in range(rounds):
                    rnd.shuffle(dirs)
                    for d in dirs:
                        rnd.shuffle(d)
                        order.extend(d)
                queue = iter(order)
                lock = threading.Lock()
                errors, mismatches, done = [], [], [0]
                def take():
                    with lock:
                        return next(queue, None)
                def run():
                    while True:
                        i = take()
                        if i is None:
                            return
                        crc, size, rel = files[i]
                        path = root + "/" + rel
                        try:
                            st = os.stat(path)
                            fd = os.open(path, os.O_RDONLY)
                            try:
                                how = (i + seed) % 3
                                if how == 0:      # read(): a slice, windowed by the shim
                                    chunks = []
                                    while True:
                                        b = os.read(fd, 65536)
                                        if not b:
                                            break
                                        chunks.append(b)
                                    body = b"".join(chunks)
                                elif how == 1:    # mmap: the slice becomes the unpacked file first
                                    os.lseek(fd, 7, os.SEEK_SET)
                                    with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as m:
                                        body = m[:]
                                    if os.lseek(fd, 0, os.SEEK_CUR) != 7:
                                        body = b""
                                else:             # pread from the end backwards, then the position is untouched
                                    n = int(size)
                                    parts = [os.pread(fd, 1000, o) for o in range((n - 1) // 1000 * 1000, -1, -1000)]
                                    body = b"".join(reversed(parts)) + os.read(fd, 1)[:0]
                            finally:
                                os.close(fd)
                            ok = st.st_size == int(size) and len(body) == int(size) and "%08x" % zlib.crc32(body) == crc
                            with lock:
                                if not ok:
                                    mismatches.append(rel)
                                done[0] += 1
                        except OSError as e:
                            with lock:
                                errors.append("%s: %s" % (rel, e.strerror))
                                done[0] += 1
                threads = [threading.Thread(target=run) for t in range(nthreads)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                for e in errors[:5]:
                    print("ERR", e)
                for m in mismatches[:5]:
                    print("MISMATCH", m)
                print("READER read=%d errors=%d mismatches=%d" % (done[0], len(errors), len(mismatches)), flush=True)

            rank = int(os.environ.get("FANSTORE_RANK", "0"))
            kids = []
            for p in range(1, procs):
                pid = os.fork()
                if pid == 0:
                    try:
                        read_all(rank * 100 + p)
                    finally:
                        sys.stdout.flush()
                        os._exit(0)
                kids.append(pid)
            read_all(rank * 100)
            for k in kids:
                os.waitpid(k, 0)
            """;
}
