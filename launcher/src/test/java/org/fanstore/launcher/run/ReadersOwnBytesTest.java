package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionInfo;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An open waits for its own file's bytes, never for another reader's (fill/README.md, "A reader's wait holds no
 * thread"), end to end: 1 real rank behind a home read at 4 MiB/s (bindfs), 7 python3 readers each open a large file
 * of a different partition still filling, and while they wait a further reader fopen(3)s a small file of a partition
 * already local (fopen asks for a plain file: the runtime unpacks it on an open worker). Its open must end before
 * every large open still waiting when it began; before, those held the 4 open workers and it queued behind them.
 * Every byte read is SHA-256-checked; the relations are measured in the same run (CLOCK_MONOTONIC, shared by the
 * processes), never against a fixed time.
 */
class ReadersOwnBytesTest {
    private static final int LARGE = 7;
    /**
     * Prints "TAG path t_asked t_opened sha256" in one write (atomic on the shared pipe): the open through the shim
     * (python's open(2)).
     */
    private static final String OPEN = "import hashlib,os,sys,time\np=sys.argv[2]\na=time.monotonic()\n"
            + "f=open(p,'rb')\nb=time.monotonic()\nh=hashlib.sha256(f.read()).hexdigest()\n"
            + "os.write(1,('%s %s %r %r %s\\n'%(sys.argv[1],p,a,b,h)).encode())\n";
    /** The same through fopen(3), which the shim serves with a plain file (never a slice). */
    private static final String FOPEN = "import ctypes,hashlib,os,sys,time\nc=ctypes.CDLL(None)\n"
            + "c.fopen.restype=ctypes.c_void_p\nc.fopen.argtypes=[ctypes.c_char_p,ctypes.c_char_p]\n"
            + "c.fileno.argtypes=[ctypes.c_void_p]\np=sys.argv[2]\na=time.monotonic()\n"
            + "fp=c.fopen(p.encode(),b'r')\nb=time.monotonic()\nassert fp, 'fopen failed'\nfd=c.fileno(fp)\n"
            + "h=hashlib.sha256()\nwhile True:\n    d=os.read(fd,1<<20)\n    if not d: break\n    h.update(d)\n"
            + "os.write(1,('%s %s %r %r %s\\n'%(sys.argv[1],p,a,b,h.hexdigest())).encode())\n";

    @TempDir
    Path work;

    @Test
    void anOpenOfALocalFileNeverQueuesBehindOpensWaitingForTheirRanges() throws Exception {
        Map<String, String> sums = new TreeMap<>();
        Path shared = work.resolve("shared");
        PartitionInfo small = prepare(5 << 20, 451, sums);
        Files.writeString(work.resolve("open.py"), OPEN);
        Files.writeString(work.resolve("fopen.py"), FOPEN);
        Path home = Files.createDirectories(work.resolve("home"));
        Assumptions.assumeTrue(FillStressTest.bindfs(shared, home, "4M"), "bindfs could not mount");
        try {
            StringBuilder cmd = new StringBuilder("cd " + work + " && python3 open.py WARM /fanstore/ro/s0.bin"
                    + " && i=0; while ! ls " + work + "/fanstore-*/rank-0/parts/" + small.fileName()
                    + " >/dev/null 2>&1 && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done; ");
            for (int i = 0; i < LARGE; i++) {
                cmd.append("python3 open.py LARGE /fanstore/ro/big").append(i).append(".bin & ");
            }
            cmd.append("sleep 1.5; python3 fopen.py QUICK /fanstore/ro/s1.bin; wait");
            FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 180, "run", "--ranks",
                    "1", "--data", home.resolve("ro.fs").toString(), "--local-dir", work.toString(), "--", "sh",
                    "-c", cmd.toString()));
            String log = r.stdout() + r.stderr();
            Readers readers = Readers.parse(r.stdout());
            assertEquals(sums, readers.got(), "bytes read back wrong or not at all\n" + log);
            assertTrue(readers.quick() != null && readers.large().size() == LARGE, log);
            double[] quick = readers.quick();
            List<double[]> large = readers.large();
            double asked = quick[0];
            List<double[]> waiting = large.stream().filter(t -> t[0] < asked && t[1] > asked).toList();
            // the setup: the large opens hold more than the 4 open workers when the small one is asked
            assertTrue(waiting.size() > 4, "only " + waiting.size() + " large opens waited when the small one was"
                    + " asked: the home was not slow enough to hold them\n" + log);
            double quickMs = (quick[1] - quick[0]) * 1000;
            double firstLarge = waiting.stream().mapToDouble(t -> t[1]).min().orElseThrow();
            assertTrue(quick[1] < firstLarge, String.format("the small local file's open took %.0f ms and ended"
                    + " %.0f ms after the first of %d large opens waiting for their ranges: it waited for their"
                    + " bytes%n%s", quickMs, (quick[1] - firstLarge) * 1000, waiting.size(), log));
            assertFalse(r.stderr().contains("cannot"), r.stderr());
            System.out.printf("small local file opened in %.0f ms while %d large opens waited (first done %.0f ms"
                    + " after it was asked); every byte read back right%n", quickMs, waiting.size(),
                    (firstLarge - asked) * 1000);
        } finally {
            FillStressTest.unmountFuse(home);
        }
    }

    /**
     * The same for partitions this node does NOT keep ({@code --local-capacity 1M}: only the small files' partition
     * fits): each large open streams its file from the slow home on its open worker (open/README.md), and the small
     * local file's fopen must still end before every large open still reading when it began; before, five such
     * reads held the 4 open workers and it queued behind their I/O.
     */
    @Test
    void anOpenOfALocalFileNeverQueuesBehindStreamedReadsOfPartitionsNotKept() throws Exception {
        Map<String, String> sums = new TreeMap<>();
        Path shared = work.resolve("shared");
        PartitionInfo small = prepare(3 << 20, 452, sums);
        Files.writeString(work.resolve("open.py"), OPEN);
        Files.writeString(work.resolve("fopen.py"), FOPEN);
        Path home = Files.createDirectories(work.resolve("home"));
        Assumptions.assumeTrue(FillStressTest.bindfs(shared, home, "4M"), "bindfs could not mount");
        try {
            StringBuilder cmd = new StringBuilder("cd " + work + " && i=0; while ! ls " + work
                    + "/fanstore-*/rank-0/parts/" + small.fileName() + " >/dev/null 2>&1 && [ $i -lt 600 ];"
                    + " do sleep 0.05; i=$((i + 1)); done; python3 open.py WARM /fanstore/ro/s0.bin; ");
            for (int i = 0; i < LARGE; i++) {
                cmd.append("python3 open.py LARGE /fanstore/ro/big").append(i).append(".bin & ");
            }
            cmd.append("sleep 1.5; python3 fopen.py QUICK /fanstore/ro/s1.bin; wait");
            FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 180, "run", "--ranks",
                    "1", "--data", home.resolve("ro.fs").toString(), "--local-dir", work.toString(),
                    "--local-capacity", "1M", "--", "sh", "-c", cmd.toString()));
            String log = r.stdout() + r.stderr();
            Readers readers = Readers.parse(r.stdout());
            assertEquals(sums, readers.got(), "bytes read back wrong or not at all\n" + log);
            assertTrue(readers.quick() != null && readers.large().size() == LARGE, log);
            double[] quick = readers.quick();
            List<double[]> large = readers.large();
            double asked = quick[0];
            List<double[]> reading = large.stream().filter(t -> t[0] < asked && t[1] > asked).toList();
            assertTrue(reading.size() > 4, "only " + reading.size() + " large opens were streaming when the small"
                    + " one was asked: the home was not slow enough to hold them\n" + log);
            double quickMs = (quick[1] - quick[0]) * 1000;
            double firstLarge = reading.stream().mapToDouble(t -> t[1]).min().orElseThrow();
            assertTrue(quick[1] < firstLarge, String.format("the small local file's open took %.0f ms and ended"
                    + " %.0f ms after the first of %d streamed large opens: it queued behind their I/O%n%s",
                    quickMs, (quick[1] - firstLarge) * 1000, reading.size(), log));
            assertFalse(r.stderr().contains("cannot"), r.stderr());
            System.out.printf("small local file opened in %.0f ms while %d large opens streamed from the home"
                    + " (first done %.0f ms after it was asked); every byte read back right%n", quickMs,
                    reading.size(), (firstLarge - asked) * 1000);
        } finally {
            FillStressTest.unmountFuse(home);
        }
    }

    /**
     * LARGE random files of largeBytes and two small ones, prepped into work/shared/ro.fs with one partition each
     * large file (balanced by bytes, largest first) and the small ones sharing the last; sums gets every file's
     * SHA-256. Returns the small files' partition.
     */
    private PartitionInfo prepare(int largeBytes, long seed, Map<String, String> sums) throws Exception {
        Path src = Files.createDirectories(work.resolve("src/ro"));
        Random rnd = new Random(seed);
        for (int i = 0; i < LARGE; i++) {
            sums.put(String.format("big%d.bin", i), write(src, String.format("big%d.bin", i), largeBytes, rnd));
        }
        sums.put("s0.bin", write(src, "s0.bin", 20_000, rnd));
        sums.put("s1.bin", write(src, "s1.bin", 30_000, rnd));
        Path shared = Files.createDirectories(work.resolve("shared"));
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                shared.resolve("ro.fs").toString(), "--partitions", String.valueOf(LARGE + 1)));
        List<PartitionInfo> parts = Manifest.read(shared.resolve("ro.fs")).regularPartitions();
        assertEquals(LARGE + 1, parts.size());
        PartitionInfo small = parts.stream().min(Comparator.comparingLong(PartitionInfo::bytes)).orElseThrow();
        assertTrue(small.bytes() < 1 << 20, "the small files share a partition: " + parts);
        return small;
    }

    private static String write(Path dir, String name, int size, Random rnd) throws Exception {
        byte[] body = new byte[size];
        rnd.nextBytes(body);
        Files.write(dir.resolve(name), body);
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body));
    }

    /** The readers' lines ("KIND PATH START END SHA256"): each file's SHA-256, the large and quick opens' times. */
    private record Readers(Map<String, String> got, List<double[]> large, double[] quick) {
        static Readers parse(String stdout) {
            Map<String, String> got = new TreeMap<>();
            List<double[]> large = new ArrayList<>();
            double[] quick = null;
            for (String line : stdout.lines().toList()) {
                String[] f = line.split(" ");
                if (f.length != 5 || !f[1].startsWith("/fanstore/ro/")) {
                    continue;
                }
                got.put(f[1].substring("/fanstore/ro/".length()), f[4]);
                double[] t = {Double.parseDouble(f[2]), Double.parseDouble(f[3])};
                if (f[0].equals("LARGE")) {
                    large.add(t);
                } else if (f[0].equals("QUICK")) {
                    quick = t;
                }
            }
            return new Readers(got, large, quick);
        }
    }
}
