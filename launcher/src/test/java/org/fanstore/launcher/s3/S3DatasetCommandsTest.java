package org.fanstore.launcher.s3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.fanstore.launcher.run.FanstoreProcess;
import org.fanstore.prep.format.Dataset;
import org.fanstore.prep.store.ObjectStore;
import org.fanstore.prep.store.S3ProxyServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * prep into and from a bucket, and verify/ls/stat/cat on a dataset there, through the real fanstore script against a
 * real S3Proxy (prep/README.md, "Prep into and from a bucket"); bad input is one line naming bucket and key.
 */
class S3DatasetCommandsTest {
    private static final long BOUND_S = 120;

    @TempDir
    static Path tmp;
    static S3ProxyServer server;
    static ObjectStore store;
    static Path src;

    @BeforeAll
    static void start() throws IOException {
        server = S3ProxyServer.start(Files.createDirectories(tmp.resolve("s3")));
        store = ObjectStore.connect(server.settings());
        src = Files.createDirectories(tmp.resolve("src/train/cls1"));
        Files.createDirectories(tmp.resolve("src/val"));
        final Random r = new Random(43);
        for (int i = 0; i < 60; i++) {
            final byte[] b = new byte[r.nextInt(20_000)];
            r.nextBytes(b);
            Files.write(tmp.resolve("src/" + (i % 2 == 0 ? "train/cls1/" : "val/") + "s" + i + ".bin"), b);
        }
        final byte[] big = new byte[3 << 20];
        r.nextBytes(big);
        Files.write(tmp.resolve("src/big.bin"), big);
        Files.createSymbolicLink(tmp.resolve("src/val/link"), Path.of("../big.bin"));
        src = tmp.resolve("src");
    }

    @AfterAll
    static void stop() {
        S3ProxyServer.stop(store, server);
    }

    private static String url(final String key) {
        return "s3://" + server.bucket() + "/" + key;
    }

    private static FanstoreProcess.Result fanstore(final String... args) throws Exception {
        return FanstoreProcess.run(tmp, server.environment(), BOUND_S, args);
    }

    private static FanstoreProcess.Result ok(final String... args) throws Exception {
        final FanstoreProcess.Result r = fanstore(args);
        assertEquals(0, r.status(), String.join(" ", args) + ": " + r.stderr());
        return r;
    }

    @Test
    void prepIntoTheBucketAnswersLikeTheLocalDataset() throws Exception {
        final String remote = url("sets/local-same.fs");
        ok("prep", "--input", src.toString(), "--output", tmp.resolve("same.fs").toString(), "--partitions", "3");
        final FanstoreProcess.Result prep = ok("prep", "--input", src.toString(), "--output", remote,
            "--partitions", "3", "--work-dir", Files.createDirectories(tmp.resolve("work")).toString());
        assertTrue(prep.stdout().contains("-> " + remote), prep.stdout());
        try (Stream<Path> left = Files.list(tmp.resolve("work"))) {
            assertEquals(0, left.count(), "the staging directory is removed");
        }
        assertTrue(ok("verify", remote).stdout().startsWith("verify: OK: " + remote));
        final String local = tmp.resolve("same.fs").toString();
        assertEquals(ok("ls", "-lR", local).stdout(), ok("ls", "-lR", remote).stdout());
        assertEquals(ok("stat", local, "val/link").stdout(), ok("stat", remote, "val/link").stdout());
        assertEquals(ok("stat", local, "train/cls1/s4.bin").stdout(),
            ok("stat", remote, "train/cls1/s4.bin").stdout());
        for (final String file : List.of("big.bin", "val/s7.bin", "val/link")) {
            final Path out = tmp.resolve("cat.out");
            // stdout is text in FanstoreProcess: bytes through a shell redirect
            final ProcessBuilder p = new ProcessBuilder("bash", "-c", "\"$0\" cat \"$1\" \"$2\" > \"$3\"",
                FanstoreProcess.repo().resolve("fanstore").toString(), remote, file, out.toString())
                .redirectError(tmp.resolve("cat.err").toFile()).directory(tmp.toFile());
            p.environment().putAll(server.environment());
            final Process running = p.start();
            assertTrue(running.waitFor(BOUND_S, TimeUnit.SECONDS));
            assertEquals(0, running.exitValue(), Files.readString(tmp.resolve("cat.err")));
            assertArrayEquals(Files.readAllBytes(src.resolve(file)), Files.readAllBytes(out), file);
        }
    }

    @Test
    void prepFromATreeOfObjectsPacksEveryObject() throws Exception {
        final Map<String, byte[]> objects = new HashMap<>();
        final Random r = new Random(7);
        for (int i = 0; i < 2000; i++) {
            final String path = "d" + i % 7 + "/e" + i % 3 + (i % 5 == 0 ? "/deep/er" : "") + "/o" + i + ".jpg";
            final byte[] b = new byte[r.nextInt(2048)];
            r.nextBytes(b);
            objects.put(path, b);
        }
        objects.entrySet().parallelStream().forEach(e -> {
            try {
                store.put(server.bucket(), "deli/" + e.getKey(), e.getValue());
            } catch (final IOException failed) {
                throw new IllegalStateException(failed.getMessage());
            }
        });
        final Path out = tmp.resolve("deli.fs");
        ok("prep", "--input", url("deli/"), "--output", out.toString(), "--partitions", "4");
        assertTrue(ok("verify", out.toString()).stdout().contains("2000 files"));
        try (Dataset d = Dataset.open(out)) {
            assertEquals("deli", d.manifest().name());
            int files = 0;
            for (final Dataset.Located l : d.all()) {
                if (l.entry().isFile()) {
                    files++;
                    assertArrayEquals(objects.get(l.entry().pathString()), d.read(l), l.entry().pathString());
                    assertEquals(0100644, l.entry().mode());
                } else {
                    assertEquals(040755, l.entry().mode(), l.entry().pathString());
                }
            }
            assertEquals(2000, files);
        }
        // and from the bucket into the bucket
        ok("prep", "--input", url("deli/d3/"), "--output", url("sets/d3.fs"));
        assertTrue(ok("verify", url("sets/d3.fs")).stdout().startsWith("verify: OK"));
    }

    @Test
    void anInterruptedUploadLeavesNoManifestAndARestartCompletes() throws Exception {
        final Path big = Files.createDirectories(tmp.resolve("bigsrc"));
        final Random r = new Random(1);
        for (int i = 0; i < 6; i++) {
            final byte[] b = new byte[12 << 20];
            r.nextBytes(b);
            Files.write(big.resolve("f" + i), b);
        }
        final String remote = url("sets/cut.fs");
        final Path objects = server.bucketDir().resolve("sets/cut.fs");
        final ProcessBuilder pb = new ProcessBuilder(FanstoreProcess.repo().resolve("fanstore").toString(), "prep",
            "--input", big.toString(), "--output", remote, "--partitions", "6").directory(tmp.toFile())
            .redirectErrorStream(true).redirectOutput(tmp.resolve("cut.log").toFile());
        pb.environment().putAll(server.environment());
        final Process prep = pb.start();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_S);
        // killed once the first partition object is whole and before the last one is
        while (!Files.exists(objects.resolve("part-00000.fsp")) && prep.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        prep.destroy();   // SIGTERM, as Ctrl-C ends the JVM
        assertTrue(prep.waitFor(BOUND_S, TimeUnit.SECONDS));
        assertFalse(Files.exists(objects.resolve("part-00005.fsp")), "killed too late to test anything");
        assertFalse(Files.exists(objects.resolve("manifest.txt")), Files.readString(tmp.resolve("cut.log")));
        final FanstoreProcess.Result verify = fanstore("verify", remote);
        assertNotEquals(0, verify.status());
        assertEquals("fanstore verify: dataset half uploaded: " + remote + " has no manifest.txt; run fanstore " +
            "prep again\n", verify.stderr());
        final FanstoreProcess.Result again = ok("prep", "--input", big.toString(), "--output", remote,
            "--partitions", "6");
        assertTrue(again.stdout().contains("uploaded 6 partitions"), again.stdout());
        assertTrue(ok("verify", remote).stdout().startsWith("verify: OK"));
        // a third run over a complete dataset needs --force, and then re-uploads nothing
        assertEquals(2, fanstore("prep", "--input", big.toString(), "--output", remote, "--partitions", "6")
            .status());
        assertTrue(ok("prep", "--input", big.toString(), "--output", remote, "--partitions", "6", "--force")
            .stdout().contains("(6 already there)"));
    }

    @Test
    void badInputIsOneLineNamingBucketAndKey() throws Exception {
        ok("prep", "--input", src.toString(), "--output", url("sets/bad.fs"));
        // wrong credentials: named, the secret never shown
        final Map<String, String> wrong = new HashMap<>(server.environment());
        wrong.put("AWS_SECRET_ACCESS_KEY", "not-the-secret-" + server.secretKey().substring(4));
        final FanstoreProcess.Result bad = FanstoreProcess.run(tmp, wrong, BOUND_S, "ls", url("sets/bad.fs"));
        oneLine(bad, "refused the credentials", url("sets/bad.fs"));
        assertFalse(bad.stderr().contains("not-the-secret"), bad.stderr());
        // no bucket
        oneLine(fanstore("verify", "s3://no-such-bucket-43/sets/x.fs"), "no bucket 'no-such-bucket-43'",
            "s3://no-such-bucket-43/sets/x.fs");
        // no key (nothing there at all)
        oneLine(fanstore("cat", url("sets/none.fs"), "a"), "no dataset at " + url("sets/none.fs"), "fanstore prep");
        // no such prefix to pack
        oneLine(fanstore("prep", "--input", url("nothing/"), "--output", tmp.resolve("n.fs").toString()),
            "no objects under " + url("nothing/"), "--input");
        // half uploaded
        store.delete(server.bucket(), "sets/bad.fs/manifest.txt");
        oneLine(fanstore("stat", url("sets/bad.fs"), "val"), "dataset half uploaded: " + url("sets/bad.fs") +
            " has no manifest.txt; run fanstore prep again", "");
        // no credentials at all: an empty environment and home
        final Path home = Files.createDirectories(tmp.resolve("emptyhome"));
        final List<String> cmd = new ArrayList<>(List.of("env", "-i", "HOME=" + home, "PATH=" + System.getenv("PATH"),
            "AWS_EC2_METADATA_DISABLED=true", "AWS_ENDPOINT_URL=" + server.endpoint(),
            FanstoreProcess.repo().resolve("fanstore").toString(), "verify", url("sets/bad.fs")));
        final Process p = new ProcessBuilder(cmd).directory(tmp.toFile()).redirectOutput(
            ProcessBuilder.Redirect.DISCARD).start();
        final String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(BOUND_S, TimeUnit.SECONDS));
        oneLine(new FanstoreProcess.Result(p.exitValue(), "", err, 0), "no credentials",
            "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE");
    }

    private static void oneLine(final FanstoreProcess.Result r, final String what, final String names) {
        assertNotEquals(0, r.status(), r.stderr());
        final String err = r.stderr();
        assertEquals(1, err.lines().count(), err);
        assertTrue(err.contains(what) && err.contains(names), err);
        assertFalse(err.contains("Exception") || err.contains("\tat ") || err.contains("software.amazon"), err);
        assertFalse(err.contains(server.secretKey()), err);
    }
}
