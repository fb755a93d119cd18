package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The checking reader of FillStressTest and ServeAtOnceTest: a python3 program run as the job's command, under the
 * real shim. It loads a listing ({@code SHA256 SIZE REL} lines, the digests computed here from the source tree),
 * forks {@code procs} child processes, each with {@code threads} threads that share one random order of every
 * file (a different seed per process and rank), and opens each file with one of four access patterns, chosen per
 * file at random: os.read() to EOF, pread() of random-sized chunks in random order, mmap of the whole file, and an
 * open/close without reading, a stat, then buffered io (fopen-like) to EOF. Every byte goes through SHA-256 and
 * the size is checked against fstat. Each process writes one result file {@code rank-R-proc-P.txt} in the output
 * directory (no interleaving with the other rank's stdout) with its counts, its slowest file and the wall-clock
 * time its first file was read whole.
 */
final class FillReader {
    private FillReader() {
    }

    /** One process's result file. */
    record Result(int rank, int proc, int read, int distinct, int errors, int mismatches, long maxMillis,
                  String slowest, long firstFileEpochMillis, String detail) {
        boolean perfect(int files) {
            return read == files && distinct == files && errors == 0 && mismatches == 0;
        }
    }

    private static final Pattern SUMMARY = Pattern.compile("READER rank=(\\d+) proc=(\\d+) read=(\\d+) distinct=(\\d+)"
            + " errors=(\\d+) mismatches=(\\d+) max_ms=(\\d+) slowest=(\\S+) first_file_epoch_ms=(\\d+)");

    static String sha256(byte[] body) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** An open writer of a listing; {@link Listing#add} writes one file's line. */
    static final class Listing implements AutoCloseable {
        private final BufferedWriter out;
        private int files;
        private long bytes;

        Listing(Path file) throws IOException {
            out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
        }

        void add(String rel, byte[] body) throws IOException {
            out.write(sha256(body) + " " + body.length + " " + rel + "\n");
            files++;
            bytes += body.length;
        }

        int files() {
            return files;
        }

        long bytes() {
            return bytes;
        }

        @Override
        public void close() throws IOException {
            out.close();
        }
    }

    /** Writes the reader program into {@code dir} and returns its path. */
    static Path install(Path dir) throws IOException {
        return Files.writeString(dir.resolve("fill_reader.py"), PROGRAM);
    }

    /**
     * The command line of one reader run: {@code /usr/bin/python3 PROGRAM ROOT LISTING OUT PROCS THREADS SEED}.
     * Shell-safe as long as the paths have no blanks (temporary directories do not).
     */
    static String command(Path program, String root, Path listing, Path out, int procs, int threads, int seed) {
        return "/usr/bin/python3 " + program + " " + root + " " + listing + " " + out + " " + procs + " " + threads
                + " " + seed;
    }

    /** Every result file in {@code out}, parsed; a result file that does not parse fails the test. */
    static List<Result> results(Path out) throws IOException {
        List<Result> all = new ArrayList<>();
        if (!Files.isDirectory(out)) {
            return all;
        }
        try (Stream<Path> s = Files.list(out)) {
            for (Path p : s.filter(f -> f.getFileName().toString().endsWith(".txt")).sorted().toList()) {
                String text = Files.readString(p);
                Matcher m = SUMMARY.matcher(text);
                assertTrue(m.find(), p + " has no summary:\n" + text);
                all.add(new Result(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
                        Integer.parseInt(m.group(3)), Integer.parseInt(m.group(4)), Integer.parseInt(m.group(5)),
                        Integer.parseInt(m.group(6)), Long.parseLong(m.group(7)), m.group(8),
                        Long.parseLong(m.group(9)), text.length() > 2000 ? text.substring(0, 2000) : text));
            }
        }
        return all;
    }

    /** Asserts {@code expected} result files, each of which read every one of {@code files} files right. */
    static List<Result> assertAllPerfect(Path out, int expected, int files, String context) throws IOException {
        List<Result> all = results(out);
        assertEquals(expected, all.size(), () -> "reader processes that wrote a result: " + all + "\n" + context);
        for (Result r : all) {
            assertTrue(r.perfect(files), () -> "rank " + r.rank() + " process " + r.proc() + " did not read all "
                    + files + " files right: " + r.detail() + "\n" + context);
        }
        return all;
    }

    /**
     * argv: root listing out procs threads seed. Forks procs children (the parent only waits): each reads every file
     * of the listing once, its threads taking files from one shared random order, and writes out/rank-R-proc-P.txt.
     * The parent exits 1 when a child died or could not write its result.
     */
    private static final String PROGRAM = """
            import hashlib, mmap, os, random, sys, threading, time
            root, listing, out = sys.argv[1], sys.argv[2], sys.argv[3]
            procs, nthreads, seed = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
            files = [l.split(" ", 2) for l in open(listing).read().splitlines() if l]
            rank = int(os.environ.get("FANSTORE_RANK", "0"))

            def read_file(path, size, how, rnd):
                if how == 0:      # read() to EOF in odd-sized chunks
                    fd = os.open(path, os.O_RDONLY)
                    try:
                        st = os.fstat(fd)
                        h = hashlib.sha256()
                        n = 0
                        step = rnd.choice((4096, 65536, 100003))
                        while True:
                            b = os.read(fd, step)
                            if not b:
                                break
                            h.update(b)
                            n += len(b)
                    finally:
                        os.close(fd)
                    return h.hexdigest(), n, st.st_size
                if how == 1:      # pread of random-sized chunks in random order
                    fd = os.open(path, os.O_RDONLY)
                    try:
                        st = os.fstat(fd)
                        step = rnd.randint(1, 262144)
                        offs = list(range(0, size, step))
                        rnd.shuffle(offs)
                        parts = {}
                        for o in offs:
                            parts[o] = os.pread(fd, step, o)
                        if os.pread(fd, 16, size) != b"":
                            return "pread-past-eof", -1, st.st_size
                        h = hashlib.sha256()
                        n = 0
                        for o in sorted(parts):
                            h.update(parts[o])
                            n += len(parts[o])
                    finally:
                        os.close(fd)
                    return h.hexdigest(), n, st.st_size
                if how == 2:      # mmap of the whole file
                    fd = os.open(path, os.O_RDONLY)
                    try:
                        st = os.fstat(fd)
                        with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as m:
                            d = hashlib.sha256(m).hexdigest()
                            n = len(m)
                    finally:
                        os.close(fd)
                    return d, n, st.st_size
                fd = os.open(path, os.O_RDONLY)   # open/close, stat, then buffered io (fopen-like)
                os.close(fd)
                st = os.stat(path)
                with open(path, "rb") as f:
                    body = f.read()
                return hashlib.sha256(body).hexdigest(), len(body), st.st_size

            def read_all(proc):
                my_seed = seed * 1000003 + rank * 1009 + proc
                rnd = random.Random(my_seed)
                order = list(range(len(files)))
                rnd.shuffle(order)
                queue = iter(order)
                lock = threading.Lock()
                state = {"read": 0, "first": 0, "max": 0.0, "slowest": "-"}
                seen, errors, mismatches = set(), [], []
                def take():
                    with lock:
                        return next(queue, None)
                def run(t):
                    trnd = random.Random(my_seed * 31 + t)
                    while True:
                        i = take()
                        if i is None:
                            return
                        digest, size, rel = files[i]
                        size = int(size)
                        path = root + "/" + rel
                        how = trnd.randrange(4)
                        t0 = time.monotonic()
                        try:
                            got, n, st_size = read_file(path, size, how, trnd)
                            ok = got == digest and n == size and st_size == size
                            err = None
                        except OSError as e:
                            ok, err = False, "%s: %s (how %d)" % (rel, e.strerror, how)
                        took = time.monotonic() - t0
                        with lock:
                            if state["first"] == 0:
                                state["first"] = int(time.time() * 1000)
                            state["read"] += 1
                            seen.add(i)
                            if took > state["max"]:
                                state["max"], state["slowest"] = took, rel
                            if err is not None:
                                errors.append(err)
                            elif not ok:
                                mismatches.append("%s (how %d)" % (rel, how))
                threads = [threading.Thread(target=run, args=(t,)) for t in range(nthreads)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                tmp = "%s/.rank-%d-proc-%d.tmp" % (out, rank, proc)
                with open(tmp, "w") as f:
                    f.write("READER rank=%d proc=%d read=%d distinct=%d errors=%d mismatches=%d max_ms=%d slowest=%s"
                            " first_file_epoch_ms=%d\\n" % (rank, proc, state["read"], len(seen), len(errors),
                            len(mismatches), int(state["max"] * 1000), state["slowest"], state["first"]))
                    for e in errors[:10]:
                        f.write("ERR %s\\n" % e)
                    for m in mismatches[:10]:
                        f.write("MISMATCH %s\\n" % m)
                os.rename(tmp, "%s/rank-%d-proc-%d.txt" % (out, rank, proc))

            os.makedirs(out, exist_ok=True)
            kids = []
            for p in range(procs):
                pid = os.fork()
                if pid == 0:
                    code = 0
                    try:
                        read_all(p)
                    except BaseException as e:
                        sys.stderr.write("reader process %d: %r\\n" % (p, e))
                        code = 1
                    finally:
                        sys.stdout.flush()
                        sys.stderr.flush()
                        os._exit(code)
                kids.append(pid)
            bad = 0
            for k in kids:
                _, status = os.waitpid(k, 0)
                bad += status != 0
            sys.exit(1 if bad else 0)
            """;
}
