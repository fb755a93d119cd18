package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The background pull gives way to this node's readers when they are short of CPU (ReaderCpu): 2 real rank JVMs,
 * the kernel's own pressure figures, real busy loops. Rank 0's command keeps re-reading a small "hot" set (after
 * its first pass: slices and cache hits, nothing from the pull) while busy loops hold both CPUs, until its pull of
 * the large "cold" set nobody reads has finished; the pull's log line must then say it gave way for some time.
 * Without readers, the same busy loops must not slow the pull at all (nobody to give way to). And while rank 0's
 * readers alone read the cold set across the link, rank 1 (whose own readers do nothing) pulls on the peers-only
 * floor: its log line must say so, and rank 0 must still read every byte right. So must a third rank that no
 * reader asks at all, told by the reading rank's notes.
 */
class PullYieldJobTest {
    @TempDir
    static Path work;

    static Path data;
    /** "/fanstore/ds/hot/..." -> SHA-256 of the source bytes. */
    static final Map<String, String> hot = new TreeMap<>();
    static Path hotList;
    static final Map<String, String> cold = new TreeMap<>();
    static Path coldList;

    @BeforeAll
    static void prepare() throws Exception {
        Path src = work.resolve("src/ds");
        RandomFiles.write(src, "/fanstore/ds", 32, 64 << 10, 5, i -> "hot/h" + i + ".bin", hot);
        // 192 MiB nobody reads: the pull's work
        RandomFiles.write(src, "/fanstore/ds", 24, 8 << 20, 6, i -> "cold/c" + i + ".bin", cold);
        data = work.resolve("ds.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                data.toString(), "--partitions", "4"));
        hotList = work.resolve("hot.txt");
        Files.write(hotList, hot.keySet(), StandardCharsets.UTF_8);
        coldList = work.resolve("cold.txt");
        Files.write(coldList, cold.keySet(), StandardCharsets.UTF_8);
    }

    /** Busy loops on every CPU (and one more), stopped when the command ends. */
    private static String hogs() {
        return "n=$(( $(nproc) + 1 )); for i in $(seq $n); do ( while :; do :; done ) & done;"
                + " trap 'kill $(jobs -p) 2>/dev/null' EXIT;";
    }

    private static FanstoreProcess.Result run(String job, String command) throws Exception {
        return run(2, data, job, command);
    }

    /** {@code command} on rank 0 alone of a job of {@code ranks} ranks, with the pull's log lines. */
    private static FanstoreProcess.Result run(int ranks, Path dataset, String job, String command) throws Exception {
        return RunJobTest.ok(FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job, "FANSTORE_VERBOSE", "1"), 240,
                "run", "--ranks", Integer.toString(ranks), "--data", dataset.toString(), "--only-rank", "0",
                "--local-dir", work.toString(), "--", "bash", "-c", command));
    }

    /** Seconds the rank's pull spent on the peers-only floor, from its log line. */
    private static double peersOnly(FanstoreProcess.Result r, int rank) {
        Matcher m = Pattern.compile("fanstore rank " + rank + ": during the pull .* to peers' readers alone"
                + " \\(this node's idle\\) for ([0-9.]+) s").matcher(r.stderr());
        assertTrue(m.find(), "no pull summary of rank " + rank + ":\n" + r.stderr());
        return Double.parseDouble(m.group(1));
    }

    /** Seconds rank 0's pull gave way to readers short of CPU, from its log line. */
    private static double gaveWay(FanstoreProcess.Result r) {
        Matcher m = Pattern.compile("fanstore rank 0: during the pull \\d+ reader opens rode it, \\d+ fetched their"
                + " file on their own; background ranges gave way to readers short of CPU for ([0-9.]+) s")
                .matcher(r.stderr());
        assertTrue(m.find(), "no pull summary of rank 0:\n" + r.stderr());
        return Double.parseDouble(m.group(1));
    }

    @Test
    void warmReadersOnBusyCpusMakeThePullGiveWay() throws Exception {
        FanstoreProcess.Result r = run("tyield" + System.nanoTime(), hogs()
                + " xargs sha256sum < " + hotList + " | sed 's/^/PASS1 /';"
                + " for k in $(seq 3000); do [ -e \"$FANSTORE_SHM_DIR/prefetched\" ] && break;"
                + " xargs cat < " + hotList + " > /dev/null; done;"
                + " xargs sha256sum < " + hotList + " | sed 's/^/LAST /'");
        for (String pass : new String[] {"PASS1", "LAST"}) {
            assertEquals(hot, sums(r, pass), pass + "\n" + r.stderr());
        }
        assertTrue(r.stderr().contains("fanstore rank 0: all partitions local after "), r.stderr());
        assertTrue(gaveWay(r) > 0, "readers re-read on busy CPUs, yet the pull never gave way:\n" + r.stderr());
    }

    /**
     * Every file read, with the bytes of the source ("PREFIX <sha256> <path>" lines), and rank {@code idle}, whose
     * readers did nothing, took the peers-only floor for its pull (what {@code scene} says happened).
     */
    private static void assertReadWhileIdleRankHeldBack(FanstoreProcess.Result r, String prefix,
            Map<String, String> expected, int idle, String scene) {
        assertEquals(expected, sums(r, prefix), r.stderr());
        assertTrue(peersOnly(r, idle) > 0, scene + ", yet rank " + idle + "'s pull kept its usual floor:\n"
                + r.stderr());
    }

    /** "PREFIX <sha256> <path>" lines of stdout -> path -> sha256. */
    private static Map<String, String> sums(FanstoreProcess.Result r, String prefix) {
        Map<String, String> got = new TreeMap<>();
        for (String line : r.stdout().split("\n")) {
            if (line.startsWith(prefix + " ")) {
                String[] f = line.substring(prefix.length() + 1).split(" +", 2);
                got.put(f[1], f[0]);
            }
        }
        return got;
    }

    @Test
    void aRankWhoseReadersAreIdlePullsOnThePeersOnlyFloorWhileAPeerReads() throws Exception {
        FanstoreProcess.Result r = run("tpeers" + System.nanoTime(),
                "xargs sha256sum < " + coldList + " | sed 's/^/COLD /'");
        assertReadWhileIdleRankHeldBack(r, "COLD", cold, 1, "rank 0 read rank 1's files while rank 1's readers did"
                + " nothing");
    }

    /**
     * 3 ranks, 3 partitions (rank r holds partition r): rank 0's readers read only rank 1's files, one at a time
     * with pauses, so no reader ever asks rank 2 for anything. Rank 2 still learns from rank 0's notes
     * (ReaderNotes) that a peer's readers fetch, and its own readers being idle, its pull must take the
     * peers-only floor; before the notes it pulled at full speed from the holders rank 0's readers waited on.
     */
    @Test
    void aRankNoReaderAsksHoldsItsPullBackWhileAPeersReadersFetchElsewhere() throws Exception {
        Path data3 = work.resolve("ds3.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", work.resolve("src/ds").toString(),
                "--output", data3.toString(), "--partitions", "3"));
        Map<String, String> ofRank1 = new TreeMap<>();
        for (Map.Entry<String, String> e : cold.entrySet()) {
            String stat = RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 60, "stat", data3.toString(),
                    e.getKey().substring("/fanstore/ds/".length()))).stdout();
            if (stat.contains("body: part-00001.fsp")) {
                ofRank1.put(e.getKey(), e.getValue());
            }
        }
        assertTrue(ofRank1.size() >= 4, "partition 1 holds too few of the cold files: " + ofRank1.keySet());
        Path list = work.resolve("rank1.txt");
        Files.write(list, ofRank1.keySet(), StandardCharsets.UTF_8);
        FanstoreProcess.Result r = run(3, data3, "tnotes" + System.nanoTime(),
                "while read -r f; do sha256sum \"$f\" | sed 's/^/R1 /'; sleep 0.1; done < " + list);
        assertReadWhileIdleRankHeldBack(r, "R1", ofRank1, 2, "rank 0's readers fetched from rank 1 while rank 2's"
                + " did nothing");
    }

    @Test
    void withoutReadersBusyCpusDoNotSlowThePull() throws Exception {
        FanstoreProcess.Result r = run("tnoread" + System.nanoTime(), hogs()
                + " for k in $(seq 3000); do [ -e \"$FANSTORE_SHM_DIR/prefetched\" ] && break; sleep 0.02; done");
        assertTrue(r.stderr().contains("fanstore rank 0: all partitions local after "), r.stderr());
        assertEquals(0.0, gaveWay(r), "nobody read, yet the pull gave way:\n" + r.stderr());
    }
}
