package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.fanstore.prep.format.Dataset;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.store.S3ProxyServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Issue 43 item 6, "a store that stops answering mid-job": a real S3Proxy process SIGSTOPped while a job reads from
 * its bucket (its port still accepts connections and nothing is ever answered: the hang a killed store, whose
 * connections are refused at once, does not show). Under the real shim, a python3 reader (the job's command, 1 and 2
 * ranks, a --local-capacity that keeps one partition of four in the job) reads files fine, then, once the store is
 * stopped: six reads at once of files no node holds (more than the four open workers kept) each get EIO after
 * the reader's bound (FETCH_TIMEOUT, 20 s), not the shim's 30 s deadline; meanwhile files of the kept partition on
 * the reader's node and stat answer at once (at 2 ranks the partition is the peer's: its files, which need an open
 * worker, at once too, the workers growing on demand); after that reads of files no node holds get EIO at once
 * (the home is marked down) while the peer's files still read, one line of the job names
 * the bucket and says the store stopped answering, and the job's last line says which source failed. SIGCONT: reads
 * succeed again once the mark-down ends, and every byte of every file checksums. runtime/fill/README.md, "A silent
 * home".
 */
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock(BesideTheOthers.LOCK)
class S3SilentStoreTest {
    private static final int FILES = 2_000;
    private static final long BOUND_S = 300;
    /** Timing.FETCH_TIMEOUT and HOME_DOWN, as a reader sees them (seconds). */
    private static final double BOUND = 20;

    @TempDir
    static Path work;
    static S3Work s3;
    static S3ProxyServer server;

    @BeforeAll
    static void prepare() throws Exception {
        s3 = S3Work.start(work, FILES, 2, 17);
        server = s3.server();
        RunJobTest.ok(FanstoreProcess.run(work, server.environment(), BOUND_S, "prep", "--input", s3.src().toString(),
                "--output", "s3://" + server.bucket() + "/sets/ds.fs", "--partitions", "4"));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    /**
     * At 2 ranks the reader runs on the rank that keeps nothing, and the files it reads "held" during the stop are
     * kept by the other rank: a peer that holds the bytes still serves them while the store is marked down.
     */
    @ParameterizedTest(name = "{0} rank(s)")
    @ValueSource(ints = {1, 2})
    void aStoreThatStopsAnsweringMidJob(int ranks) throws Exception {
        // the bounded run keeps 2 ranks: every check of 1 rank's but the reader's own node holding the kept partition
        Soak.orBounded(ranks == 2, "1 rank");
        Path marks = Files.createDirectories(work.resolve("marks-" + ranks));
        Path local = Files.createDirectories(work.resolve("local-" + ranks));
        Path results = work.resolve("results-" + ranks + ".json");
        Path program = work.resolve("silent_reader.py");
        Files.writeString(program, READER);
        String job = "ts3silent" + System.nanoTime();
        Map<String, String> partitionOf = partitions();
        long capacity = capacity(ranks);
        Map<String, String> env = new HashMap<>(server.environment());
        env.put("FANSTORE_JOB_ID", job);
        CompletableFuture<FanstoreProcess.Result> running = CompletableFuture.supplyAsync(() -> {
            try {
                return FanstoreProcess.run(work, env, BOUND_S, "run", "--ranks", Integer.toString(ranks),
                        "--prefetch", ranks > 1 ? "off" : "on", "--data", "s3://" + server.bucket()
                        + "/sets/ds.fs", "--local-dir", local.toString(), "--local-capacity", Long.toString(capacity),
                        "--", "python3", program.toString(), "/fanstore/ds", s3.listing().toString(),
                        marks.toString(), results.toString());
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        boolean paused = false;
        try {
            writePlan(marks.resolve("plan"), partitionOf, keptPartitions(local, job, ranks, running));
            await(marks.resolve("warmed"), running, 120);
            server.pause();
            paused = true;
            Files.createFile(marks.resolve("stopped"));
            await(marks.resolve("phase-b"), running, 150);   // on the code before: not within 150 s
            server.resume();
            paused = false;
            Files.createFile(marks.resolve("resumed"));
        } finally {
            if (paused) {
                server.resume();
            }
        }
        FanstoreProcess.Result r = running.get(BOUND_S, TimeUnit.SECONDS);
        String context = "exit " + r.status() + "\nstdout:\n" + r.stdout() + "\nstderr:\n" + r.stderr();
        System.out.println("silent store job: " + context);
        assertEquals(0, r.status(), context);
        JsonObject got = JsonParser.parseString(Files.readString(results)).getAsJsonObject();
        System.out.println("silent store results: " + got);
        for (JsonElement e : got.getAsJsonArray("warm")) {
            assertEquals("ok", e.getAsJsonArray().get(0).getAsString(), "a read before the stop failed: " + got);
        }
        // the reader's bound: EIO (not the shim's 30 s deadline, nor a hang), every one of six reads at once
        for (JsonElement e : got.getAsJsonArray("silent1")) {
            JsonArray a = e.getAsJsonArray();
            double s = a.get(1).getAsDouble();
            assertEquals("EIO", a.get(0).getAsString(), "a read of a file not local during the stop: " + got);
            assertTrue(s >= BOUND / 2 && s <= BOUND + 8, "EIO after " + s + " s, the bound is " + BOUND + " s: " + got);
        }
        // held on this node or by the peer: at once (the peer's file needs an open worker: the six reads held all
        // the workers until their bound when there were four; they now grow on demand, open/README.md)
        double heldBound = 5;
        for (JsonElement e : got.getAsJsonArray("held")) {
            JsonArray a = e.getAsJsonArray();
            assertEquals("ok", a.get(0).getAsString(), "a file held on a node during the stop: " + got);
            assertTrue(a.get(1).getAsDouble() < heldBound, "a held file took " + a.get(1) + " s: " + got);
        }
        for (JsonElement e : got.getAsJsonArray("held2")) {   // while marked down: no worker waits on the store
            JsonArray a = e.getAsJsonArray();
            assertEquals("ok", a.get(0).getAsString(), "a held file while the store is marked down: " + got);
            assertTrue(a.get(1).getAsDouble() < 5, "a held file took " + a.get(1) + " s while marked down: " + got);
        }
        for (JsonElement e : got.getAsJsonArray("stat")) {
            JsonArray a = e.getAsJsonArray();
            assertTrue(a.get(0).getAsBoolean() && a.get(1).getAsDouble() < 5, "stat during the stop: " + got);
        }
        // marked down: the next readers do not wait the bound each
        for (JsonElement e : got.getAsJsonArray("silent2")) {
            JsonArray a = e.getAsJsonArray();
            assertEquals("EIO", a.get(0).getAsString(), "a read while the store is marked down: " + got);
            assertTrue(a.get(1).getAsDouble() < 5, "EIO after " + a.get(1) + " s while marked down: " + got);
        }
        // back after SIGCONT once the mark-down ends, and every byte right
        assertFalse(got.get("recovered_after").isJsonNull(), "reads never succeeded again: " + got);
        assertTrue(got.get("recovered_after").getAsDouble() <= 3 * BOUND, "recovered after "
                + got.get("recovered_after") + " s: " + got);
        JsonObject all = got.getAsJsonObject("all");
        assertEquals(FILES + 2, all.get("files").getAsInt(), got.toString());
        assertEquals(0, all.get("bad_count").getAsInt(), "files wrong after the store came back: " + got);
        // one line naming the bucket and what to do; the last line says which source failed
        String dataset = "s3://" + server.bucket() + "/sets/ds.fs";
        List<String> said = r.stderr().lines().filter(l -> l.startsWith("fanstore rank")
                && l.contains("stopped answering")).toList();
        assertEquals(1, said.size(), context);
        assertTrue(said.get(0).contains(dataset) && said.get(0).contains("check that the store is up"), context);
        List<String> lines = r.stderr().strip().lines().toList();
        String last = lines.get(lines.size() - 1);
        assertTrue(last.startsWith("fanstore: ") && last.contains("object store of " + dataset
                + " stopped answering"), "the last line: " + last);
        String out = r.stdout() + r.stderr();
        assertFalse(out.contains("Exception") || out.contains("\tat ") || out.contains("software.amazon")
                || out.contains("org.fanstore"), context);
        assertFalse(out.contains(server.secretKey()), "the secret in the job's output");
    }

    /** Each file's partition (its body's partition file name), from the dataset the bucket's directory holds. */
    private static Map<String, String> partitions() throws Exception {
        Map<String, String> of = new HashMap<>();
        try (Dataset d = Dataset.open(server.bucketDir().resolve("sets/ds.fs"))) {
            for (Dataset.Located l : d.all()) {
                if (!l.entry().isDir() && !l.entry().isSymlink()) {
                    of.put(l.entry().pathString(), l.partition().file().getFileName().toString());
                }
            }
        }
        return of;
    }

    /**
     * A --local-capacity that keeps one partition of four: at 1 rank the smallest; at 2 ranks (no prefetch) rank 1's
     * smallest regular one, which rank 0, the reader, then reads from rank 1.
     */
    private static long capacity(int ranks) throws Exception {
        long min = Long.MAX_VALUE;
        for (PartitionInfo p : Manifest.read(server.bucketDir().resolve("sets/ds.fs")).partitions()) {
            if (ranks == 1 || !p.broadcast() && p.index() % ranks == 1) {
                min = Math.min(min, p.bytes());
            }
        }
        return min;
    }

    /** The partitions each rank keeps, once its fill ended (the PREFETCHED marker: runtime/layout/README.md). */
    private static List<Set<String>> keptPartitions(Path local, String job, int ranks, CompletableFuture<?> running)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        List<Set<String>> kept = new ArrayList<>();
        while (kept.size() < ranks && System.nanoTime() < deadline && !running.isDone()) {
            try (Stream<Path> roots = Files.list(Path.of("/dev/shm"))) {
                Path shm = roots.filter(p -> p.getFileName().toString().endsWith("-" + job)).findFirst().orElse(null);
                int r = kept.size();
                if (shm != null && Files.exists(shm.resolve("rank-" + r + "/prefetched"))) {
                    Set<String> mine = new TreeSet<>();
                    Path parts = local.resolve(shm.getFileName()).resolve("rank-" + r + "/parts");
                    try (Stream<Path> p = Files.list(parts)) {
                        p.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".fsp")
                                && !n.startsWith(".")).forEach(mine::add);
                    }
                    kept.add(mine);
                    continue;
                }
            }
            Thread.sleep(50);
        }
        if (kept.size() < ranks) {
            throw new AssertionError("the fill never ended: " + (running.isDone() ? running.get() : "running"));
        }
        return kept;
    }

    /**
     * The reader's plan (rank 0 reads): files read before the stop, during it (held by no node; held by its own node
     * at 1 rank, by the peer alone at 2; stat), and after it.
     */
    private static void writePlan(Path plan, Map<String, String> partitionOf, List<Set<String>> kept)
            throws Exception {
        Set<String> others = new TreeSet<>();
        kept.subList(1, kept.size()).forEach(others::addAll);
        others.removeAll(kept.get(0));
        List<String> remote = new ArrayList<>();
        List<String> held = new ArrayList<>();
        for (String line : Files.readAllLines(s3.listing(), StandardCharsets.UTF_8)) {
            String rel = line.split(" ", 3)[2];
            String p = partitionOf.get(rel);
            if (kept.size() == 1 ? kept.get(0).contains(p) : others.contains(p)) {
                held.add(rel);
            } else if (!kept.get(0).contains(p)) {
                remote.add(rel);
            }
        }
        assertTrue(remote.size() >= 20 && held.size() >= 8, "kept " + kept + ": " + held.size() + " files held, "
                + remote.size() + " not");
        JsonObject p = new JsonObject();
        p.addProperty("reader", 0);
        p.add("warm", list(remote.subList(0, 5), held.subList(0, 2)));
        p.add("silent1", list(remote.subList(5, 11)));
        p.add("silent2", list(remote.subList(11, 15)));
        p.add("stat", list(remote.subList(15, 18)));
        p.add("held", list(held.subList(2, 5)));
        p.add("held2", list(held.subList(5, 8)));
        Files.writeString(plan.resolveSibling("plan.tmp"), p.toString());
        Files.move(plan.resolveSibling("plan.tmp"), plan);
    }

    @SafeVarargs
    private static JsonArray list(List<String>... parts) {
        JsonArray a = new JsonArray();
        for (List<String> l : parts) {
            l.forEach(a::add);
        }
        return a;
    }

    private static void await(Path mark, CompletableFuture<FanstoreProcess.Result> running, long seconds)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!Files.exists(mark) && System.nanoTime() < deadline && !running.isDone()) {
            Thread.sleep(50);
        }
        assertTrue(Files.exists(mark), "no " + mark.getFileName() + ": " + (running.isDone() ? running.get() : ""));
    }

    /** The job's command: python3 under the real shim; every read SHA-256-checked against the listing. */
    private static final String READER = String.join("\n",
            "import errno, hashlib, json, os, sys, threading, time",
            "mount, listing, marks, out = sys.argv[1:5]",
            "sums = {}",
            "for line in open(listing):",
            "    sha, size, rel = line.rstrip('\\n').split(' ', 2)",
            "    sums[rel] = (sha, int(size))",
            "def wait_for(name, bound=180):",
            "    t = time.time()",
            "    while not os.path.exists(os.path.join(marks, name)):",
            "        if time.time() - t > bound:",
            "            sys.exit('no mark ' + name)",
            "        time.sleep(0.05)",
            "def read(rel):",
            "    t = time.monotonic()",
            "    try:",
            "        with open(os.path.join(mount, rel), 'rb') as f:",
            "            ok = hashlib.sha256(f.read()).hexdigest() == sums[rel][0]",
            "        return ['ok' if ok else 'mismatch', time.monotonic() - t]",
            "    except OSError as e:",
            "        return [errno.errorcode.get(e.errno, str(e.errno)), time.monotonic() - t]",
            "def stat(rel):",
            "    t = time.monotonic()",
            "    return [os.stat(os.path.join(mount, rel)).st_size == sums[rel][1], time.monotonic() - t]",
            "res = {}",
            "wait_for('plan')",
            "plan = json.load(open(os.path.join(marks, 'plan')))",
            "if int(os.environ['FANSTORE_RANK']) != plan['reader']:",
            "    wait_for('done', 600)",
            "    sys.exit(0)",
            "res['warm'] = [read(r) for r in plan['warm']]",
            "open(os.path.join(marks, 'warmed'), 'w').close()",
            "wait_for('stopped')",
            "first = [None] * len(plan['silent1'])",
            "def one(i, r):",
            "    first[i] = read(r)",
            "threads = [threading.Thread(target=one, args=(i, r)) for i, r in enumerate(plan['silent1'])]",
            "for t in threads:",
            "    t.start()",
            "time.sleep(1)",
            "res['held'] = [read(r) for r in plan['held']]",
            "res['stat'] = [stat(r) for r in plan['stat']]",
            "for t in threads:",
            "    t.join()",
            "res['silent1'] = first",
            "res['silent2'] = [read(r) for r in plan['silent2']]",
            "res['held2'] = [read(r) for r in plan['held2']]",
            "open(os.path.join(marks, 'phase-b'), 'w').close()",
            "wait_for('resumed')",
            "t0, res['recovered_after'] = time.monotonic(), None",
            "while time.monotonic() - t0 < 90:",
            "    if read(plan['silent2'][0])[0] == 'ok':",
            "        res['recovered_after'] = time.monotonic() - t0",
            "        break",
            "    time.sleep(0.5)",
            "bad = [[rel, r] for rel in sums for r in [read(rel)] if r[0] != 'ok']",
            "res['all'] = {'files': len(sums), 'bad_count': len(bad), 'bad': bad[:10]}",
            "with open(out, 'w') as f:",
            "    json.dump(res, f)",
            "open(os.path.join(marks, 'done'), 'w').close()",
            "");
}
