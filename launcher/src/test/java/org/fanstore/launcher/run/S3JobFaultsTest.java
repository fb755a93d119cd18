package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.store.ObjectStore;
import org.fanstore.prep.store.S3ProxyServer;
import org.fanstore.prep.store.SlowDownProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Issue 43 item 6, the faults of a {@code fanstore run --data s3://...} job, one test each, against a real S3Proxy
 * (and, for throttling, a real socket proxy in front of it answering 503 SlowDown: prep/store's test-jar
 * {@link SlowDownProxy}). Each refusal is ONE line naming bucket/key (or the endpoint) and what to do, with no stack
 * trace, class name or secret, and the exit status says which kind (2: the user's to fix, 1: the store's).
 *
 * <p>Which test covers which fault (the same level is not tested twice):
 * <ul>
 *   <li>no credentials: {@link #noCredentials} (run); verify:
 *       S3DatasetCommandsTest.badInputIsOneLineNamingBucketAndKey; the client: ObjectStoreTest</li>
 *   <li>wrong credentials: {@link #wrongCredentials} (run); ls:
 *       S3DatasetCommandsTest.badInputIsOneLineNamingBucketAndKey</li>
 *   <li>no such bucket: {@link #noSuchBucket} (run); verify: S3DatasetCommandsTest</li>
 *   <li>no such dataset key: {@link #noSuchDataset} (run); cat: S3DatasetCommandsTest</li>
 *   <li>half uploaded (partitions, no manifest): {@link #halfUploaded} (run); stat/verify and the interrupted upload
 *       leaving no manifest, then resumed:
 *       S3DatasetCommandsTest.anInterruptedUploadLeavesNoManifestAndARestartCompletes</li>
 *   <li>the store stops answering mid-job (EIO after the bound, the endpoint named): killed (connections refused):
 *       ObjectStoreJobTest.aStoreThatStopsAnsweringGivesEioAfterTheBound; hanging (SIGSTOP: accepted, never
 *       answered; the bound, the mark-down, one line, the last line, recovery):
 *       S3SilentStoreTest.aStoreThatStopsAnsweringMidJob (not repeated here)</li>
 *   <li>throttling: {@link #throttledGetsAreRetriedAndEveryByteReadsRight}, {@link #throttlingPastTheBoundIsEio};
 *       the client's bound: ObjectStoreTest.slowDownTwiceIsRetriedAndPastTheBoundIsOneLine</li>
 *   <li>two nodes sharing no directory: ObjectStoreJobTest.twoNodesWithNoSharedDirectoryJoinThroughTheBucket</li>
 * </ul>
 */
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock(BesideTheOthers.LOCK)
class S3JobFaultsTest {
    private static final int FILES = 2_000;
    private static final int LARGE = 2;
    private static final long BOUND_S = 180;

    @TempDir
    static Path work;
    /** The stress set, its listing, FillReader and the server. */
    static S3Work s3;
    static S3ProxyServer server;

    @BeforeAll
    static void prepare() throws Exception {
        s3 = S3Work.start(work, FILES, LARGE, 6);
        server = s3.server();
        RunJobTest.ok(FanstoreProcess.run(work, server.environment(), BOUND_S, "prep", "--input", s3.src().toString(),
                "--output", url("sets/ds.fs"), "--partitions", "4"));
        // half uploaded: what an interrupted prep leaves (partitions and table, no manifest)
        try (ObjectStore store = ObjectStore.connect(server.settings())) {
            Path whole = server.bucketDir().resolve("sets/ds.fs");
            for (String name : Manifest.read(whole).partitions().stream().map(p -> p.fileName()).toList()) {
                store.upload(server.bucket(), "sets/half.fs/" + name, whole.resolve(name));
            }
        }
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    static String url(String key) {
        return "s3://" + server.bucket() + "/" + key;
    }

    /** {@code fanstore run --data DATA -- true} in {@code env}: refused before any runtime starts. */
    private static FanstoreProcess.Result refused(Map<String, String> env, String data) throws Exception {
        return FanstoreProcess.run(work, env, BOUND_S, "run", "--data", data, "--", "true");
    }

    /** One line holding every one of {@code want}, no stack trace, class name or secret; exit {@code status}. */
    private static void oneLine(FanstoreProcess.Result r, int status, String... want) {
        String err = r.stderr();
        assertEquals(status, r.status(), err);
        assertEquals(1, err.strip().lines().count(), err);
        for (String w : want) {
            assertTrue(err.contains(w), "no '" + w + "' in: " + err);
        }
        assertFalse(err.contains("Exception") || err.contains("\tat ") || err.contains("software.amazon")
                || err.contains("org.fanstore"), err);
        assertFalse((r.stdout() + err).contains(server.secretKey()), err);
    }

    @Test
    void noCredentials() throws Exception {
        Path home = Files.createDirectories(work.resolve("emptyhome"));
        List<String> cmd = List.of("env", "-i", "HOME=" + home, "PATH=" + System.getenv("PATH"),
                "AWS_EC2_METADATA_DISABLED=true", "AWS_ENDPOINT_URL=" + server.endpoint(),
                FanstoreProcess.repo().resolve("fanstore").toString(), "run", "--data", url("sets/ds.fs"), "--",
                "true");
        Process p = new ProcessBuilder(cmd).directory(work.toFile()).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(BOUND_S, TimeUnit.SECONDS));
        oneLine(new FanstoreProcess.Result(p.exitValue(), "", err, 0), 2, "fanstore run: ", "no credentials",
                server.endpoint().toString(), "set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE");
    }

    @Test
    void wrongCredentials() throws Exception {
        Map<String, String> env = new HashMap<>(server.environment());
        env.put("AWS_SECRET_ACCESS_KEY", "wrong-" + server.secretKey().substring(6));
        FanstoreProcess.Result r = refused(env, url("sets/ds.fs"));
        oneLine(r, 2, "refused the credentials", url("sets/ds.fs/manifest.txt"), server.endpoint().toString(),
                "check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY");
        assertFalse(r.stderr().contains(env.get("AWS_SECRET_ACCESS_KEY")), r.stderr());
    }

    @Test
    void noSuchBucket() throws Exception {
        oneLine(refused(server.environment(), "s3://no-such-bucket-43/sets/ds.fs"), 2,
                "no bucket 'no-such-bucket-43'", server.endpoint().toString(), "create it, or correct the location");
    }

    @Test
    void noSuchDataset() throws Exception {
        oneLine(refused(server.environment(), url("sets/nothing.fs")), 2, url("sets/nothing.fs"), "fanstore prep");
    }

    @Test
    void halfUploaded() throws Exception {
        oneLine(refused(server.environment(), url("sets/half.fs")), 2, "half uploaded", url("sets/half.fs"),
                "manifest.txt", "run fanstore prep again");
    }

    /** Every 3rd GET answered 503 SlowDown: the SDK's retries absorb it, every byte of every file reads right. */
    @Test
    void throttledGetsAreRetriedAndEveryByteReadsRight() throws Exception {
        try (SlowDownProxy proxy = SlowDownProxy.everyNthGet(server.port(), 3)) {
            String job = "ts3slow" + System.nanoTime();
            Path out = work.resolve("out-" + job);
            List<String> args = new ArrayList<>(List.of("run", "--ranks", "2", "--data", url("sets/ds.fs"),
                    "--local-dir", Files.createDirectories(work.resolve("local")).toString(), "--"));
            args.addAll(List.of(FillReader.command(s3.program(), "/fanstore/ds", s3.listing(), out, 1, 2, 1)
                    .split(" ")));
            Map<String, String> env = viaProxy(proxy);
            env.put("FANSTORE_JOB_ID", job);
            FanstoreProcess.Result r = FanstoreProcess.run(work, env, BOUND_S, args.toArray(String[]::new));
            String context = "exit " + r.status() + "\n" + r.stderr();
            FillReader.assertAllPerfect(out, 2, FILES + LARGE, context);
            assertEquals(0, r.status(), context);
            System.out.printf("throttled job: %d GETs answered SlowDown, %d requests passed, %.1f s%n",
                    proxy.refused(), proxy.passed(), r.millis() / 1e3);
            assertTrue(proxy.refused() >= 3, "too few GETs throttled to test anything: " + proxy.refused());
        }
    }

    /**
     * Throttling that does not stop: a reader of a file not kept here gets EIO within the bound, not a hang, and
     * a line of the job says the store throttled, naming the endpoint.
     */
    @Test
    void throttlingPastTheBoundIsEio() throws Exception {
        Path marks = Files.createDirectories(work.resolve("marks"));
        String script = "cat /fanstore/ds/a00/b0/c0/f00000.bin > /dev/null && touch " + marks.resolve("first")
                + " && while [ ! -e " + marks.resolve("throttled") + " ]; do sleep 0.1; done;"
                + " s=$(date +%s); if cat /fanstore/ds/a01/b1/c1/f00001.bin > /dev/null; then echo READ-OK;"
                + " else echo READ-FAILED after $(( $(date +%s) - s )) s; fi";
        try (SlowDownProxy proxy = SlowDownProxy.everyNthGet(server.port(), Integer.MAX_VALUE)) {
            Map<String, String> env = viaProxy(proxy);
            env.put("FANSTORE_JOB_ID", "ts3throttle" + System.nanoTime());
            CompletableFuture<FanstoreProcess.Result> running = CompletableFuture.supplyAsync(() -> {
                try {
                    return FanstoreProcess.run(work, env, BOUND_S, "run", "--data", url("sets/ds.fs"),
                            "--local-dir", work.resolve("local").toString(), "--local-capacity", "1", "--", "sh",
                            "-c", script);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!Files.exists(marks.resolve("first")) && System.nanoTime() < deadline && !running.isDone()) {
                Thread.sleep(50);
            }
            assertTrue(Files.exists(marks.resolve("first")), "the first read never finished");
            proxy.throttleAll();
            Files.createFile(marks.resolve("throttled"));
            FanstoreProcess.Result r = running.get(BOUND_S, TimeUnit.SECONDS);
            System.out.println("throttled past the bound: " + r.stdout().strip() + "\n" + r.stderr());
            Matcher failed = Pattern.compile("READ-FAILED after (\\d+) s").matcher(r.stdout());
            assertTrue(failed.find(), r.stdout() + r.stderr());
            assertTrue(Integer.parseInt(failed.group(1)) <= 65, "EIO came after " + failed.group(1) + " s");
            String endpoint = "127.0.0.1:" + proxy.port();
            assertTrue(r.stderr().lines().anyMatch(l -> l.contains(endpoint) && l.contains("throttl")),
                    "no line says the store at " + endpoint + " throttled\n" + r.stderr());
            assertFalse((r.stdout() + r.stderr()).contains(server.secretKey()));
        }
    }

    private static Map<String, String> viaProxy(SlowDownProxy proxy) {
        Map<String, String> env = new HashMap<>(server.environment());
        env.put("AWS_ENDPOINT_URL", proxy.endpoint().toString());
        return env;
    }
}
