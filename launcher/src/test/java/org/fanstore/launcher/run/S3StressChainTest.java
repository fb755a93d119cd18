package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.TableInfo;
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
 * Issue 43's chain as a user runs it, against one real S3Proxy process: FillStressTest's stress set (20,000 small
 * files and 4 of 1-3 MiB) -> {@code fanstore prep --input DIR --output s3://BUCKET/p/NAME.fs} (raw and
 * {@code --compress lz4}) -> {@code fanstore run --data s3://... --ranks 1|2} with {@link FillReader} reading every
 * file, SHA-256 against the source tree. Then prep FROM the bucket (the tree uploaded one object per file, parallel
 * PUTs, {@code prep --input s3://BUCKET/tree/ --output s3://.../fromtree.fs}) and a 2-rank job over that, and
 * {@code fanstore upgrade s3://...} of a dataset in the older format (no metadata table).
 *
 * <p>Bounded run (default; measured on this 2-core VM: 65 s quiet with a 5k tree, 131 s while other builds ran):
 * 20k-file jobs raw at 1 rank and LZ4 at 2 ranks (4-12 s each); the tree for prep-from-the-bucket is the
 * first 2,000 small files of the set plus the large ones, as single PUTs through S3Proxy go at ~220-370/s here (20k:
 * ~55-90 s) and a bigger tree tests nothing a small one does not. {@code FANSTORE_SOAK=1} (or
 * {@code -Dfanstore.s3.full=true}): raw at 2 ranks and LZ4 at 1 rank too, and the whole 20k tree as objects.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class S3StressChainTest {
    static final boolean FULL = Boolean.getBoolean("fanstore.s3.full") || Soak.ON;
    private static final int FILES = 20_000;
    private static final int LARGE = 4;
    private static final int TREE_FILES = FULL ? FILES : 2_000;
    private static final long BOUND_S = 300;

    @TempDir
    static Path work;
    /** The stress set, its listing, FillReader and the server. */
    static S3Work s3;
    static S3ProxyServer server;
    static ObjectStore store;
    static Path treeListing;

    @BeforeAll
    static void prepare() throws Exception {
        long t = System.nanoTime();
        s3 = S3Work.start(work, FILES, LARGE, 20_000);
        server = s3.server();
        store = ObjectStore.connect(server.settings());
        System.out.printf("s3 chain: stress set of %d files written, S3Proxy up in %.1f s%n", FILES + LARGE,
                (System.nanoTime() - t) / 1e9);
    }

    @AfterAll
    static void stop() {
        S3ProxyServer.stop(store, server);
    }

    static String url(String key) {
        return "s3://" + server.bucket() + "/" + key;
    }

    static FanstoreProcess.Result fanstore(String... args) throws Exception {
        return FanstoreProcess.run(work, server.environment(), BOUND_S, args);
    }

    static FanstoreProcess.Result ok(String... args) throws Exception {
        FanstoreProcess.Result r = fanstore(args);
        assertEquals(0, r.status(), String.join(" ", args) + "\n" + r.stdout() + r.stderr());
        assertFalse((r.stdout() + r.stderr()).contains(server.secretKey()), "the secret key in the output");
        return r;
    }

    /** The real prep command into the bucket, once per compression (the jobs below read what it wrote). */
    @ParameterizedTest(name = "prep into the bucket, compress {0}")
    @CsvSource({"none", "lz4"})
    @Order(1)
    void prepIntoTheBucket(String compress) throws Exception {
        String remote = url("p/stress-" + compress + ".fs");
        FanstoreProcess.Result r = ok("prep", "--input", s3.src().toString(), "--output", remote, "--partitions", "8",
                "--compress", compress);
        assertTrue(r.stdout().contains("-> " + remote), r.stdout());
        Manifest m = Manifest.read(server.bucketDir().resolve("p/stress-" + compress + ".fs"));
        assertEquals(FILES + LARGE, m.files());
        System.out.printf("s3 chain: prep %s into the bucket: %.1f s%n", compress, r.millis() / 1e3);
    }

    /** Every file of the stress set read right from the bucket, checksummed against the source tree. */
    @ParameterizedTest(name = "{0} rank(s), compress {1}")
    @CsvSource({"1, none", "2, none", "2, lz4", "1, lz4"})
    @Order(2)
    void everyFileOfTheStressSetReadsRight(int ranks, String compress) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(FULL || ranks == 1 == compress.equals("none"),
                "2 ranks raw and 1 rank LZ4 run with FANSTORE_SOAK=1 (or -Dfanstore.s3.full=true)");
        job(url("p/stress-" + compress + ".fs"), "/fanstore/ds", s3.listing(), ranks, FILES + LARGE);
    }

    /** The tree as objects (one per file, parallel PUTs) -> prep from the bucket into the bucket -> 2 ranks. */
    @Test
    @Order(3)
    void prepFromATreeInTheBucketThenEveryFileReadsRight() throws Exception {
        long t = System.nanoTime();
        treeListing = work.resolve("tree-sha256.txt");
        List<String> lines = Files.readAllLines(s3.listing()).stream()
                .filter(l -> {
                    String rel = l.substring(l.lastIndexOf(' ') + 1);
                    return rel.startsWith("large/") || Integer.parseInt(rel.substring(rel.length() - 9,
                            rel.length() - 4)) < TREE_FILES;
                }).toList();
        Files.write(treeListing, lines);
        List<String> rels = lines.stream().map(l -> l.substring(l.lastIndexOf(' ') + 1)).toList();
        assertEquals(TREE_FILES + LARGE, rels.size(), "the listing's form changed: " + lines.get(0));
        rels.parallelStream().forEach(rel -> {
            try {
                store.put(server.bucket(), "tree/" + rel, Files.readAllBytes(s3.src().resolve(rel)));
            } catch (IOException e) {
                throw new IllegalStateException(e.getMessage());
            }
        });
        double puts = (System.nanoTime() - t) / 1e9;
        String remote = url("p/fromtree.fs");
        FanstoreProcess.Result prep = ok("prep", "--input", url("tree/"), "--output", remote, "--partitions", "4");
        System.out.printf("s3 chain: %d PUTs in %.1f s; prep from the bucket into it: %.1f s%n", rels.size(), puts,
                prep.millis() / 1e3);
        assertEquals(TREE_FILES + LARGE, Manifest.read(server.bucketDir().resolve("p/fromtree.fs")).files());
        job(remote, "/fanstore/tree", treeListing, 2, TREE_FILES + LARGE);
    }

    /**
     * {@code fanstore upgrade s3://...} of a dataset prepped by an older fanstore (manifest version 1, no table, as
     * MetadataTableJobTest makes one): refused by run naming the command; upgraded, the bucket holds what prep
     * writes, with the manifest written after the table; a job then reads every file right.
     */
    @Test
    @Order(4)
    void upgradeInTheBucketAddsTheTableAndWritesTheManifestLast() throws Exception {
        String key = "p/older.fs";
        Path current = server.bucketDir().resolve("p/fromtree.fs");
        Path older = server.bucketDir().resolve(key);
        // the objects of the older form: the partitions as they are, no table, a version 1 manifest
        try (Stream<Path> files = Files.list(current)) {
            for (Path f : files.filter(f -> f.getFileName().toString().endsWith(".fsp")).toList()) {
                store.upload(server.bucket(), key + "/" + f.getFileName(), f);
            }
        }
        String manifest = Files.readString(current.resolve(Manifest.FILE_NAME));
        String v1 = manifest.replace("fanstore-manifest 2", "fanstore-manifest 1").replaceAll("(?m)^table .*\n", "");
        assertFalse(v1.equals(manifest), "the manifest's form changed");
        store.put(server.bucket(), key + "/" + Manifest.FILE_NAME, v1.getBytes(StandardCharsets.UTF_8));

        FanstoreProcess.Result refused = fanstore("run", "--data", url(key), "--", "true");
        assertTrue(refused.status() != 0 && refused.stderr().contains("fanstore upgrade " + url(key)),
                refused.stderr());
        FanstoreProcess.Result up = ok("upgrade", url(key));
        assertTrue(up.stdout().contains("added " + TableInfo.FILE_NAME), up.stdout());
        assertEquals(manifest, Files.readString(older.resolve(Manifest.FILE_NAME)), "upgrade writes what prep wrote");
        assertEquals(-1, Files.mismatch(current.resolve(TableInfo.FILE_NAME), older.resolve(TableInfo.FILE_NAME)),
                "the uploaded table differs from prep's");
        FileTime table = Files.getLastModifiedTime(older.resolve(TableInfo.FILE_NAME));
        FileTime last = Files.getLastModifiedTime(older.resolve(Manifest.FILE_NAME));
        assertTrue(last.compareTo(table) >= 0, "the manifest (" + last + ") was written before the table ("
                + table + ")");
        assertTrue(ok("verify", url(key)).stdout().startsWith("verify: OK"));
        job(url(key), "/fanstore/tree", treeListing, 1, TREE_FILES + LARGE);
    }

    private static void job(String data, String root, Path list, int ranks, int files) throws Exception {
        String job = "ts3chain" + ranks + System.nanoTime();
        Path out = work.resolve("out-" + job);
        List<String> args = new ArrayList<>(List.of("run", "--ranks", Integer.toString(ranks), "--data", data,
                "--local-dir", Files.createDirectories(work.resolve("local")).toString(), "--"));
        args.addAll(List.of(FillReader.command(s3.program(), root, list, out, 1, 3, 1).split(" ")));
        Map<String, String> env = new HashMap<>(server.environment());
        env.put("FANSTORE_JOB_ID", job);
        FanstoreProcess.Result r = FanstoreProcess.run(work, env, BOUND_S, args.toArray(String[]::new));
        String context = "exit " + r.status() + "\n" + r.stderr();
        FillReader.assertAllPerfect(out, ranks, files, context);
        assertEquals(0, r.status(), context);
        assertFalse((r.stdout() + r.stderr()).contains(server.secretKey()), "the secret key in the output");
        assertTrue(r.stderr().contains("object store"), "no object store figures in the end line\n" + context);
        System.out.printf("s3 chain: %s, %d rank(s), %d files right: %.1f s%n", data, ranks, files, r.millis() / 1e3);
    }
}
