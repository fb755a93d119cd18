package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.fanstore.prep.store.ObjectStore;
import org.fanstore.prep.store.S3ProxyServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code fanstore run --data s3://BUCKET/PREFIX/NAME.fs} end to end (issue 43) against a real S3Proxy process: a
 * small dataset prepped locally (FillStressTest's set at 2,000 files and 4 of 1-3 MiB, 6 partitions, raw and LZ4) and
 * uploaded object by object under {@code sets/NAME.fs/}; each job's command is {@link FillReader} (every file,
 * SHA-256-checked, read/pread/mmap/stdio). Jobs at 1 and 2 ranks; a tiny --local-capacity; two launchers as two
 * nodes in their own mount namespaces (no shared /tmp, /dev/shm or home) joining through the bucket; the store
 * killed mid-job. No output may hold the store's secret key. The refusals before a job starts (no credentials,
 * wrong ones, no bucket, no dataset, half uploaded) and throttling: S3JobFaultsTest.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ObjectStoreJobTest {
    private static final int FILES = 2_000;
    private static final int LARGE = 4;

    @TempDir
    static Path work;
    /** The stress set, its listing, FillReader and the server. */
    static S3Work s3;
    static S3ProxyServer server;
    static final Map<String, Long> STORED = new HashMap<>();

    @BeforeAll
    static void prepare() throws Exception {
        s3 = S3Work.start(work, FILES, LARGE, 43);
        server = s3.server();
        try (ObjectStore store = ObjectStore.connect(server.settings())) {
            for (String compress : List.of("none", "lz4")) {
                Path data = Files.createDirectories(work.resolve("prepped")).resolve(compress + ".fs");
                RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 300, "prep", "--input", s3.src().toString(),
                        "--output", data.toString(), "--partitions", "6", "--compress", compress));
                STORED.put(compress, server.upload(store, data, "sets/" + compress + ".fs"));
            }
        }
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static String url(String compress) {
        return "s3://" + server.bucket() + "/sets/" + compress + ".fs";
    }

    /** Runs one job of {@code ranks} local ranks over the dataset in the bucket; every reader must be perfect. */
    private static FanstoreProcess.Result job(int ranks, String compress, Path stats, String... extra)
            throws Exception {
        return jobThen(ranks, compress, stats, null, extra);
    }

    /** As above; {@code then}, when not null, is a shell command each rank runs after its reader (same stdout). */
    private static FanstoreProcess.Result jobThen(int ranks, String compress, Path stats, String then,
                                                  String... extra) throws Exception {
        String job = "ts3" + ranks + compress + System.nanoTime();
        Path out = work.resolve("out-" + job);
        List<String> args = new ArrayList<>(List.of("run", "--ranks", Integer.toString(ranks), "--data",
                url(compress), "--local-dir", Files.createDirectories(work.resolve("local")).toString()));
        if (stats != null) {
            args.addAll(List.of("--stats", stats.toString()));
        }
        args.addAll(List.of(extra));
        args.add("--");
        String reader = FillReader.command(s3.program(), "/fanstore/ds", s3.listing(), out, 1, 2, 1);
        args.addAll(then == null ? List.of(reader.split(" ")) : List.of("sh", "-c", reader + " && " + then));
        Map<String, String> env = new HashMap<>(server.environment());
        env.put("FANSTORE_JOB_ID", job);
        FanstoreProcess.Result r = FanstoreProcess.run(work, env, 180, args.toArray(String[]::new));
        String context = "exit " + r.status() + "\n" + r.stderr();
        FillReader.assertAllPerfect(out, ranks, FILES + LARGE, context);
        assertEquals(0, r.status(), context);
        assertNoSecret(r.stdout() + r.stderr() + (stats != null ? Files.readString(stats) : ""));
        System.out.printf("s3 job, %d rank(s), %s%s: %.1f s; %s%n", ranks, compress,
                extra.length == 0 ? "" : " " + String.join(" ", extra), r.millis() / 1e3, endLine(r.stderr()));
        return r;
    }

    private static String endLine(String stderr) {
        Matcher m = Pattern.compile("fanstore: \\d+ ranks, .*").matcher(stderr);
        return m.find() ? m.group() : "no end line";
    }

    private static void assertNoSecret(String output) {
        assertFalse(output.contains(server.secretKey()), "the store's secret key appears in the job's output");
    }

    @ParameterizedTest(name = "{0} rank(s), compress {1}")
    @CsvSource({"1, none", "1, lz4", "2, lz4"})
    @Order(1)
    void everyFileReadsRightFromTheBucket(int ranks, String compress) throws Exception {
        FanstoreProcess.Result r = job(ranks, compress, null);
        assertTrue(endLine(r.stderr()).contains("object store"), r.stderr());
    }

    /** (e) 2 ranks: the end line and --stats show the store's bytes and requests; each byte leaves it ~once. */
    @Test
    @Order(2)
    void twoRanksReadEachByteFromTheStoreOnce() throws Exception {
        Path stats = work.resolve("stats-2.json");
        FanstoreProcess.Result r = job(2, "none", stats);
        assertTrue(endLine(r.stderr()).contains("object store"), r.stderr());
        JsonObject fill = JsonParser.parseString(Files.readString(stats)).getAsJsonObject()
                .getAsJsonObject("totals").getAsJsonObject("fill");
        long got = fill.get("bytes_from_objectstore").getAsLong();
        long requests = fill.get("objectstore_requests").getAsLong();
        double ratio = (double) got / STORED.get("none");
        System.out.printf("2 ranks: %d bytes from the object store in %d requests, dataset %d bytes: %.3fx%n", got,
                requests, STORED.get("none"), ratio);
        assertTrue(requests > 0);
        assertTrue(ratio <= 1.05, "the store served " + ratio + "x the dataset\n" + r.stderr());
    }

    /** (b) A --local-capacity far below the dataset: what is not kept is read per access, every byte right. */
    @Test
    @Order(3)
    void aTinyLocalCapacityStillReadsEveryByteRight() throws Exception {
        job(2, "none", null, "--local-capacity", "1M");
    }

    /**
     * (b) The same, without pins left behind: every runtime answer of a cached file is a pin its reader's shim
     * unlinks after its open (cache/CachePins). Files of the partitions a rank owns but does not keep (1M) are such
     * answers too; once the rank's reader is done, neither of its cache directories may hold a pin, and no pin may
     * have been reclaimed unopened (the "did not open" warning, which a job longer than the grace printed).
     */
    @Test
    @Order(4)
    void aTinyLocalCapacityLeavesNoPinBehind() throws Exception {
        String rank = "\"$(basename \"$FANSTORE_SHM_DIR\")\"";
        String local = work.resolve("local") + "/\"$(basename \"$(dirname \"$FANSTORE_SHM_DIR\")\")\"/" + rank;
        FanstoreProcess.Result r = jobThen(2, "none", null, "find \"$FANSTORE_SHM_DIR/cache\" " + local + "/cache"
                + " -name 'p*' -printf 'LEFT-PIN %p\\n'", "--local-capacity", "1M");
        assertFalse(r.stdout().contains("LEFT-PIN"), r.stdout());
        assertFalse(r.stderr().contains("did not open"), r.stderr());
    }

    /**
     * (c) Two launchers as two nodes that share no directory: each in its own mount namespace with its own tmpfs
     * over /tmp, /dev/shm and home, SLURM-like variables, no --rendezvous-dir: they join through the bucket.
     */
    @Test
    @Order(5)
    void twoNodesWithNoSharedDirectoryJoinThroughTheBucket() throws Exception {
        assumeTrue(new ProcessBuilder("unshare", "--mount", "true").start().waitFor() == 0,
                "needs root for unshare --mount");
        // outside /tmp (each node mounts its own tmpfs there): the program, the listing and the results
        Path shared = Files.createDirectories(FanstoreProcess.repo().resolve("launcher/target/s3-nodes-"
                + ProcessHandle.current().pid()));
        Path prog = FillReader.install(shared);
        Path list = Files.copy(s3.listing(), shared.resolve("sha256.txt"), StandardCopyOption.REPLACE_EXISTING);
        Path out = shared.resolve("out");
        String job = "s3nodes" + System.nanoTime() % 1_000_000_000L;
        String home = System.getProperty("user.home");
        // the clone itself may live under /tmp or home (CI's may): held aside by a bind mount and put back over
        // each node's fresh tmpfs, so every node still runs this build
        String repo = FanstoreProcess.repo().toString();
        String hold = "/run/fanstore-repo-" + job;
        String mounts = "mkdir -p " + hold + "-$$ && mount --bind " + repo + " " + hold + "-$$"
                + " && mount -t tmpfs tmpfs /tmp && mount -t tmpfs tmpfs /dev/shm && mount -t tmpfs tmpfs " + home
                + " && mkdir -p " + repo + " && mount --bind " + hold + "-$$ " + repo + " && exec \"$@\"";
        List<CompletableFuture<FanstoreProcess.Result>> nodes = new ArrayList<>();
        for (int node = 0; node < 2; node++) {
            Map<String, String> env = new HashMap<>(server.environment());
            env.putAll(Map.of("SLURM_JOB_ID", job, "SLURM_STEP_ID", "0", "SLURM_PROCID", Integer.toString(node),
                    "SLURM_NTASKS", "2", "SLURM_NNODES", "2", "SLURM_NODEID", Integer.toString(node),
                    "SLURM_LOCALID", "0", "SLURM_TASKS_PER_NODE", "1(x2)", "TMPDIR", "/tmp"));
            nodes.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return FanstoreProcess.runIn(new String[] {"unshare", "--mount", "--propagation", "private",
                                    "sh", "-c", mounts, "node"}, shared, env, 180, "run", "--data", url("none"), "--",
                            "/usr/bin/python3", prog.toString(), "/fanstore/ds", list.toString(), out.toString(),
                            "1", "2", "3");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        String context = "";
        for (int node = 0; node < 2; node++) {
            FanstoreProcess.Result r = nodes.get(node).get(200, TimeUnit.SECONDS);
            context += "node " + node + ": exit " + r.status() + "\n" + r.stderr() + "\n";
            assertNoSecret(r.stdout() + r.stderr());
        }
        try (var held = Files.list(Path.of("/run"))) {   // the nodes' empty hold points, seen from here
            held.filter(p -> p.getFileName().toString().startsWith("fanstore-repo-" + job))
                    .forEach(p -> p.toFile().delete());
        }
        FillReader.assertAllPerfect(out, 2, FILES + LARGE, context);
        for (int node = 0; node < 2; node++) {
            assertEquals(0, nodes.get(node).get().status(), context);
        }
        try (ObjectStore store = ObjectStore.connect(server.settings())) {
            assertEquals(List.of(), store.list(server.bucket(), "sets/none.fs.jobs/"),
                    "the rendezvous objects outlived the join");
        }
        System.out.println("two nodes through the bucket:\n" + context);
    }

    /**
     * (d) The store killed mid-job: a reader of a file not kept here gets EIO after the bound, not a hang, and the
     * job says in one line which source failed (the store's endpoint).
     */
    @Test
    @Order(6)
    void aStoreThatStopsAnsweringGivesEioAfterTheBound() throws Exception {
        Path marks = Files.createDirectories(work.resolve("marks"));
        String script = "cat /fanstore/ds/a00/b0/c0/f00000.bin > /dev/null && touch " + marks.resolve("first")
                + " && while [ ! -e " + marks.resolve("killed") + " ]; do sleep 0.1; done;"
                + " s=$(date +%s); if cat /fanstore/ds/a01/b1/c1/f00001.bin > /dev/null; then echo READ-OK;"
                + " else echo READ-FAILED after $(( $(date +%s) - s )) s; fi";
        Map<String, String> env = new HashMap<>(server.environment());
        env.put("FANSTORE_JOB_ID", "ts3kill" + System.nanoTime());
        CompletableFuture<FanstoreProcess.Result> running = CompletableFuture.supplyAsync(() -> {
            try {
                return FanstoreProcess.run(work, env, 180, "run", "--data", url("none"), "--local-dir",
                        work.resolve("local").toString(), "--local-capacity", "1", "--", "sh", "-c", script);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!Files.exists(marks.resolve("first")) && System.nanoTime() < deadline && !running.isDone()) {
                Thread.sleep(50);
            }
            assertTrue(Files.exists(marks.resolve("first")), "the first read never finished");
            server.kill();
            Files.createFile(marks.resolve("killed"));
            FanstoreProcess.Result r = running.get(150, TimeUnit.SECONDS);
            System.out.println("store killed mid-job: " + r.stdout().strip() + "\n" + r.stderr());
            Matcher failed = Pattern.compile("READ-FAILED after (\\d+) s").matcher(r.stdout());
            assertTrue(failed.find(), r.stdout() + r.stderr());
            assertTrue(Integer.parseInt(failed.group(1)) <= 35, "EIO came after " + failed.group(1) + " s");
            String endpoint = "127.0.0.1:" + server.port();
            assertTrue(r.stderr().lines().anyMatch(l -> l.contains(endpoint)), "no line names " + endpoint + "\n"
                    + r.stderr());
            assertNoSecret(r.stdout() + r.stderr());
        } finally {
            server.restart();
        }
    }
}
