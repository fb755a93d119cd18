package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Pattern;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.PartitionReader;
import org.fanstore.runtime.placement.Placement;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Per-job I/O statistics end to end: 2 real rank JVMs, an unmodified C reader (bench/native/reader.c) under the
 * shim on each rank opening and reading every file once, prefetch off. What each rank must have counted follows
 * from the dataset's partitions and the placement rule: remote opens = the files the other rank holds, local
 * opens = its own, bytes fetched = the sizes of the other rank's files, bytes served = what the other fetched.
 * The JSON document is parsed by python3, not by the code that wrote it.
 */
class StatsJobTest {
    @TempDir
    static Path work;

    static Path data;
    static Path list;
    static Path reader;
    /** By rank: files held and their bytes. */
    static final long[] files = new long[2];
    static final long[] bytes = new long[2];

    @BeforeAll
    static void prepare() throws Exception {
        Path src = work.resolve("src/ds");
        Random rnd = new Random(23);
        for (int i = 0; i < 60; i++) {
            byte[] body = new byte[1 + rnd.nextInt(40 << 10)];
            rnd.nextBytes(body);
            Path f = src.resolve("d" + i % 5 + "/f" + i + ".bin");
            Files.createDirectories(f.getParent());
            Files.write(f, body);
        }
        data = work.resolve("ds.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                data.toString(), "--partitions", "5", "--compress", "none"));
        Manifest manifest = Manifest.read(data);
        Placement placement = new Placement(2, 0);
        List<String> paths = new ArrayList<>();
        for (PartitionInfo info : manifest.regularPartitions()) {
            int owner = placement.owner(info.index());
            try (PartitionReader r = PartitionReader.open(data.resolve(info.fileName()))) {
                for (PartitionEntry e : r.entries()) {
                    if (e.isFile()) {
                        files[owner]++;
                        bytes[owner] += e.rawLength();
                        paths.add("/fanstore/" + manifest.name() + "/" + e.pathString());
                    }
                }
            }
        }
        assertEquals(60, paths.size(), "every file is in a regular partition");
        assertTrue(files[0] > 0 && files[1] > 0, "both ranks hold files");
        list = Files.write(work.resolve("paths.txt"), paths, StandardCharsets.UTF_8);
        reader = work.resolve("reader");
        Process cc = new ProcessBuilder("gcc", "-O2", "-pthread", "-o", reader.toString(),
                FanstoreProcess.repo().resolve("bench/native/reader.c").toString()).inheritIO().start();
        assertEquals(0, cc.waitFor(), "gcc bench/native/reader.c");
    }

    @Test
    void countsOfAKnownWorkloadMatchThePlacement() throws Exception {
        Path json = work.resolve("stats.json");
        FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID",
                "tstats" + System.nanoTime()), 180, "run", "--ranks", "2", "--data", data.toString(), "--prefetch",
                "off", "--local-dir", work.toString(), "--stats", json.toString(), "--", "sh", "-c",
                // after the fill of each rank's own share: every own file is then a local open
                "while [ ! -e \"$FANSTORE_SHM_DIR/prefetched\" ]; do sleep 0.05; done; exec " + reader + " read 1 "
                        + list + " 1"));
        // python3 reads the document and prints the numbers compared here, one "rank key value" per line
        String script = "import json,sys\n"
                + "d=json.load(open(sys.argv[1]))\n"
                + "print('job schema_version', d['schema_version'])\n"
                + "print('job ranks', d['job']['ranks'])\n"
                + "print('job ranks_reported', d['job']['ranks_reported'])\n"
                + "print('job total_opens', d['totals']['opens']['total'])\n"
                + "for r in d['ranks']:\n"
                + "  o=r['opens']; b=r['bytes']\n"
                + "  for k in ('local','remote','decompressed','errors','total'): print(r['rank'], k, o[k])\n"
                + "  for k in ('fetched','served'): print(r['rank'], k, b[k])\n"
                + "  print(r['rank'], 'opened', b['local_direct_opened']+b['cache_hit_direct_opened']"
                + "+b['opened_via_runtime'])\n"
                + "  print(r['rank'], 'shim_counters', int(r['shim_counters']))\n"
                + "  print(r['rank'], 'remote_latency_count', r['open_latency_us']['remote']['count'])\n"
                + "  print(r['rank'], 'remote_p99_positive', int(r['open_latency_us']['remote']['p99'] > 0))\n"
                + "  st=r['remote_open_stages_us']\n"
                + "  ps=[v['count'] for k,v in st.items() if 'holder' not in k and k != 'shim_wake']\n"
                + "  print(r['rank'], 'stage_counts_min', min(ps))\n"
                + "  print(r['rank'], 'stage_counts_max', max(ps))\n"
                + "  print(r['rank'], 'shim_wakes', st['shim_wake']['count'])\n"
                + "  print(r['rank'], 'first_byte_p99_positive', int(st['fetch_first_byte']['p99'] > 0))\n"
                + "  print(r['rank'], 'holder_served', st['holder_serve_first']['count'])\n";
        Process py = new ProcessBuilder("python3", "-c", script, json.toString()).redirectErrorStream(true).start();
        String out = new String(py.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, py.waitFor(), "python3 json.load: " + out + "\n" + Files.readString(json));
        Map<String, Long> got = new HashMap<>();
        for (String line : out.split("\n")) {
            String[] f = line.trim().split(" ");
            got.put(f[0] + " " + f[1], Long.parseLong(f[2]));
        }
        String context = out + "\n" + r.stderr();
        assertEquals(2L, got.get("job schema_version"), context);
        assertEquals(2L, got.get("job ranks"), context);
        assertEquals(2L, got.get("job ranks_reported"), context);
        assertEquals(2L * 60, got.get("job total_opens"), context);
        for (int rank = 0; rank < 2; rank++) {
            int other = 1 - rank;
            assertEquals(1L, got.get(rank + " shim_counters"), context);
            assertEquals(files[rank], got.get(rank + " local"), "rank " + rank + " local opens\n" + context);
            assertEquals(files[other], got.get(rank + " remote"), "rank " + rank + " remote opens\n" + context);
            assertEquals(files[other], got.get(rank + " remote_latency_count"), context);
            assertEquals(1L, got.get(rank + " remote_p99_positive"), context);
            // every remote open is broken down into every stage; the holder timed each reader request it served
            assertEquals(files[other], got.get(rank + " stage_counts_min"), context);
            assertEquals(files[other], got.get(rank + " stage_counts_max"), context);
            // ring_wait is among those stages: the shim stamped every request; each remote open's answer woke a
            // shim that counted it (local opens may be answered by the runtime too, never more than 60)
            long wakes = got.get(rank + " shim_wakes");
            assertTrue(wakes >= files[other] && wakes <= 60, "rank " + rank + " wake-ups " + wakes + "\n" + context);
            assertEquals(1L, got.get(rank + " first_byte_p99_positive"), context);
            assertEquals(files[rank], got.get(rank + " holder_served"), context);
            assertEquals(0L, got.get(rank + " decompressed"), context);
            assertEquals(0L, got.get(rank + " errors"), context);
            assertEquals(60L, got.get(rank + " total"), context);
            assertEquals(bytes[other], got.get(rank + " fetched"), "rank " + rank + " bytes fetched\n" + context);
            assertEquals(bytes[rank], got.get(rank + " served"), "rank " + rank + " bytes served\n" + context);
            assertEquals(bytes[0] + bytes[1], got.get(rank + " opened"), "rank " + rank + " bytes opened\n" + context);
        }
        assertTrue(Pattern.compile("fanstore: 2 ranks, 120 opens \\(\\d+% local, 0% cache hits, \\d+% remote\\), "
                + "[0-9.]+ (B|KiB|MiB) opened, p99 open via runtime \\d+ us, load [0-9.]+ s")
                .matcher(r.stderr()).find(), r.stderr());
    }

    @Test
    void anIntervalPrintsCompactLinesWhileTheJobRuns() throws Exception {
        FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID",
                "tstatsi" + System.nanoTime(), "FANSTORE_STATS_INTERVAL", "0.3"), 120, "run", "--data",
                data.toString(), "--local-dir", work.toString(), "--", "sh", "-c",
                reader + " read 1 " + list + " 1 && sleep 1.5"));
        assertTrue(Pattern.compile("fanstore rank 0: opens=60 local=60 cache=0 remote=0 MB/s=[0-9.]+ p99_us=\\d+")
                .matcher(r.stderr()).find(), r.stderr());
    }

    @Test
    void aBadIntervalIsAUsageError() throws Exception {
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of("FANSTORE_STATS_INTERVAL", "soon"), 60, "run",
                "--data", data.toString(), "--", "true");
        assertEquals(2, r.status(), r.stderr());
        assertTrue(r.stderr().contains("FANSTORE_STATS_INTERVAL must be a number of seconds"), r.stderr());
    }
}
