package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.MatchResult;
import java.util.regex.Pattern;
import java.util.zip.CRC32;
import org.junit.jupiter.api.BeforeAll;
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
    static Path listing;
    static Path reader;

    @BeforeAll
    static void prepare() throws Exception {
        Path src = work.resolve("src/ds");
        listing = work.resolve("crc.txt");
        Random rnd = new Random(11);
        CRC32 crc = new CRC32();
        try (BufferedWriter out = Files.newBufferedWriter(listing, StandardCharsets.UTF_8)) {
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
            }
        }
        plain = work.resolve("plain.fs");
        lz4 = work.resolve("lz4.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                plain.toString(), "--partitions", "8"));
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                lz4.toString(), "--partitions", "8", "--compress", "lz4"));
        reader = work.resolve("reader.py");
        Files.writeString(reader, READER);
    }

    @ParameterizedTest(name = "{0} rank(s), compress {1}")
    @CsvSource({"1, none", "1, lz4", "2, none", "2, lz4"})
    void everyReadOfEveryProcessIsRightWhileUnpacking(int ranks, String compress) throws Exception {
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

    /** argv: root, listing ("crc32 size relpath" lines), processes, threads. Prints one READER line per process. */
    private static final String READER = """
            import mmap, os, random, sys, threading, zlib
            root, listing, procs, nthreads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
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
