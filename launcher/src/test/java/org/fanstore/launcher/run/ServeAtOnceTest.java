package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.PartitionReader;
import org.fanstore.runtime.placement.Placement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command starts as soon as the metadata table is published and every byte then comes through the fill path
 * (runtime/.../fill/README.md), end to end with real rank JVMs, the real shim and real signals: the first byte well
 * before the rank's stage-in could have ended; a dataset larger than the local storage; a local disk that fills
 * mid-fill; a peer stalled (SIGSTOP) mid-transfer, whose partitions are then served from the shared FS; and the
 * statistics that say where the bytes came from. Readers are {@link FillReader} (SHA-256 of every byte against the
 * source tree's) or, for the first byte, a python3 one-off.
 */
class ServeAtOnceTest {
    @TempDir
    static Path work;
    /** Mount points (bindfs and tmpfs) to take down after the class, in case a test could not. */
    static final List<Path> MOUNTS = new ArrayList<>();

    @AfterAll
    static void unmountAll() throws Exception {
        for (Path p : MOUNTS) {
            FillStressTest.unmountFuse(p);
        }
    }

    /** A prepped dataset of random (incompressible) files, with its listing for {@link FillReader}. */
    record Dataset(Path data, Path listing, int files, long bytes, Map<String, String> sha256) {
        /** The partitions of {@code rank} among {@code ranks} (no replicas), each file once, in partition order. */
        List<List<String>> filesOf(int rank, int ranks) throws Exception {
            Manifest manifest = Manifest.read(data);
            Placement placement = new Placement(ranks, 0);
            List<List<String>> parts = new ArrayList<>();
            for (PartitionInfo info : manifest.regularPartitions()) {
                if (placement.owner(info.index()) == rank) {
                    List<String> files = new ArrayList<>();
                    try (PartitionReader r = PartitionReader.open(data.resolve(info.fileName()))) {
                        for (PartitionEntry e : r.entries()) {
                            if (e.isFile()) {
                                files.add(e.pathString());
                            }
                        }
                    }
                    parts.add(files);
                }
            }
            return parts;
        }
    }

    /** {@code files} random files of {@code bytes} each in 4 directories, prepped raw into {@code partitions}. */
    static Dataset dataset(String name, int files, int bytes, int partitions, long seed) throws Exception {
        Path src = work.resolve("src-" + name).resolve(name);
        Path listing = work.resolve(name + "-sha256.txt");
        Map<String, String> sums = new HashMap<>();
        Random rnd = new Random(seed);
        byte[] body = new byte[bytes];
        try (FillReader.Listing out = new FillReader.Listing(listing)) {
            for (int i = 0; i < files; i++) {
                rnd.nextBytes(body);
                String rel = "d" + i % 4 + "/f" + i + ".bin";
                Path f = src.resolve(rel);
                Files.createDirectories(f.getParent());
                Files.write(f, body);
                out.add(rel, body);
                sums.put(rel, FillReader.sha256(body));
            }
        }
        Path data = Files.createDirectories(work.resolve("shared-" + name)).resolve(name + ".fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 300, "prep", "--input", src.toString(), "--output",
                data.toString(), "--partitions", Integer.toString(partitions)));
        return new Dataset(data, listing, files, (long) files * bytes, sums);
    }

    /** A real tmpfs of {@code size} (e.g. "30m"); skips the test where mounting is not allowed (needs root). */
    static Path tmpfs(String name, String size) throws Exception {
        Assumptions.assumeTrue(JobLayout.currentUid() == 0, "mounting a small tmpfs needs root");
        Path dir = Files.createDirectories(work.resolve(name));
        Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", dir.toString())
                .redirectErrorStream(true).start();
        Assumptions.assumeTrue(mount.waitFor() == 0, "cannot mount a tmpfs here: "
                + new String(mount.getInputStream().readAllBytes()));
        MOUNTS.add(dir);
        return dir;
    }

    static void unmount(Path dir) throws Exception {
        if (MOUNTS.remove(dir)) {
            FillStressTest.unmountFuse(dir);
        }
    }

    /**
     * a. The first byte before the stage-in ends: 2 ranks over 340 MiB of 1 MiB files behind a bindfs read at
     * 20 MiB/s, so copying one rank's share (170 MiB) takes 8.5 s even with the shared FS to itself (both shares
     * together 17 s). Rank 0's command reads one file, the last of rank 0's last partition (the one a stage-in in
     * partition order copies last), and must have its first byte within 5 s of the launch, and every byte right.
     */
    @Test
    void theFirstByteComesLongBeforeTheStageInCouldHaveEnded() throws Exception {
        int files = 340;
        int fileBytes = 1 << 20;
        String rate = "20M";
        Dataset ds = dataset("atonce", files, fileBytes, 8, 31);
        List<List<String>> own = ds.filesOf(0, 2);
        long share = own.stream().mapToLong(List::size).sum() * (long) fileBytes;
        double shareSeconds = share / (20.0 * 1048576);
        assertTrue(shareSeconds >= 8, "the test's premise: rank 0's share takes " + shareSeconds + " s to copy");
        List<String> last = own.get(own.size() - 1);
        String rel = last.get(last.size() - 1);
        Path mnt = Files.createDirectories(work.resolve("mnt-atonce"));
        Assumptions.assumeTrue(FillStressTest.bindfs(ds.data().getParent(), mnt, rate), "bindfs could not mount");
        MOUNTS.add(mnt);
        Path program = Files.writeString(work.resolve("first_byte.py"), """
                import hashlib, os, sys, time
                fd = os.open(sys.argv[1], os.O_RDONLY)
                first = os.read(fd, 1)
                t = time.time()
                h = hashlib.sha256(first)
                while True:
                    b = os.read(fd, 1 << 16)
                    if not b:
                        break
                    h.update(b)
                os.close(fd)
                print("FIRST_BYTE_EPOCH_MS %d SHA256 %s" % (int(t * 1000), h.hexdigest()), flush=True)
                """);
        try {
            String job = "tatonce" + System.nanoTime();
            long launched = System.currentTimeMillis();
            FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 180, "run",
                    "--ranks", "2", "--only-rank", "0", "--data", mnt.resolve("atonce.fs").toString(), "--local-dir",
                    work.toString(), "--", "/usr/bin/python3", program.toString(), "/fanstore/atonce/" + rel);
            String context = "exit " + r.status() + "\nstdout:\n" + r.stdout() + "\nstderr:\n" + r.stderr();
            Matcher m = Pattern.compile("FIRST_BYTE_EPOCH_MS (\\d+) SHA256 (\\w+)").matcher(r.stdout());
            assertTrue(m.find(), "the command printed no first byte\n" + context);
            long firstByte = Long.parseLong(m.group(1)) - launched;
            System.out.printf("first byte: %d ms after the launch (rank 0's share alone would copy in %.1f s at %s/s;"
                    + " job %.1f s)%n", firstByte, shareSeconds, rate, r.millis() / 1e3);
            assertEquals(ds.sha256().get(rel), m.group(2), "bytes of " + rel + "\n" + context);
            assertTrue(firstByte < 5_000, "the command's first byte came " + firstByte + " ms after the launch\n"
                    + context);
            assertEquals(0, r.status(), context);
        } finally {
            unmount(mnt);
        }
    }

    /**
     * b. A dataset larger than the local storage: 100 MiB on a 30 MiB tmpfs, 2 ranks (one node's directory, so both
     * ranks' kept partitions share the 30 MiB). The old path refused it ("not enough space"); now what does not fit
     * is streamed, and every byte every reader reads is right.
     */
    @Test
    void aDatasetLargerThanTheLocalStorageRunsAndReadsRight() throws Exception {
        Dataset ds = dataset("larger", 400, 256 << 10, 8, 32);
        Path small = tmpfs("small-larger", "30m");
        try {
            readEverythingOnBothRanks(ds, small, List.of());
        } finally {
            unmount(small);
        }
    }

    /**
     * c. A full disk mid-fill: the same 100 MiB on a 30 MiB tmpfs with {@code --local-capacity 1G}, so the plan keeps
     * more than the disk holds and a partition's fill meets ENOSPC: that partition is abandoned (streamed), and no
     * read fails.
     */
    @Test
    void aDiskThatFillsMidFillFailsNoRead() throws Exception {
        Dataset ds = dataset("full", 400, 256 << 10, 8, 33);
        Path small = tmpfs("small-full", "30m");
        try {
            readEverythingOnBothRanks(ds, small, List.of("--local-capacity", "1G"));
        } finally {
            unmount(small);
        }
    }

    /** Both ranks' readers (2 processes x 2 threads) read every file of {@code ds}; all right, exit 0. */
    private static void readEverythingOnBothRanks(Dataset ds, Path local, List<String> options) throws Exception {
        String job = "tsmall" + System.nanoTime();
        Path out = work.resolve("out-" + job);
        Path program = FillReader.install(work);
        List<String> args = new ArrayList<>(List.of("run", "--ranks", "2", "--data", ds.data().toString(),
                "--local-dir", local.toString()));
        args.addAll(options);
        args.add("--");
        String name = ds.data().getFileName().toString().replace(".fs", "");
        args.addAll(List.of(FillReader.command(program, "/fanstore/" + name, ds.listing(), out, 2, 2, 1)
                .split(" ")));
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 240,
                args.toArray(String[]::new));
        String context = "exit " + r.status() + "\n" + r.stderr();
        assertFalse(r.stderr().contains("not enough space"), "refused for want of local space:\n" + context);
        List<FillReader.Result> results = FillReader.assertAllPerfect(out, 4, ds.files(), context);
        assertEquals(0, r.status(), context);
        // the fill may say it stopped keeping a partition for ENOSPC; a reader's open must never fail for it
        assertFalse(r.stderr().contains("cannot open "), "an open failed:\n" + context);
        System.out.printf("%s on a 30 MiB local disk%s: %d readers x %d files right, job %.1f s, slowest file %d ms%n",
                name, options.isEmpty() ? "" : " " + String.join(" ", options), results.size(), ds.files(),
                r.millis() / 1e3, results.stream().mapToLong(FillReader.Result::maxMillis).max().orElse(0));
    }

    /**
     * d. A peer stalled mid-transfer, its partitions served from the shared FS: rank 1's runtime is stopped
     * (SIGSTOP: its process and sockets stay, it just never answers) right after ready, and rank 0's reader then
     * reads every file, half of which rank 1 holds: each range rank 1 does not answer within the stall bound goes to
     * the shared FS. Every byte right, no file slower than 10 s; then rank 1 is continued and the job ends with 0.
     * (HolderLossTest expected the job to fail here; the fill path serves instead.)
     */
    @Test
    void aStalledPeersPartitionsAreServedFromTheSharedFs() throws Exception {
        Dataset ds = dataset("stall", 128, 2 << 20, 4, 34);
        String job = "tstall" + System.nanoTime();
        Path go = work.resolve(job + ".go");
        Path done = work.resolve(job + ".done");
        Path out = work.resolve("out-" + job);
        Path program = FillReader.install(work);
        String reader = "if [ $FANSTORE_RANK = 0 ]; then while [ ! -e " + go + " ]; do sleep 0.05; done; "
                + FillReader.command(program, "/fanstore/stall", ds.listing(), out, 1, 2, 1) + "; st=$?; touch "
                + done + "; exit $st; else while [ ! -e " + done + " ]; do sleep 0.1; done; fi; exit 0";
        FaultsTest.Job j = FaultsTest.Job.start(ds.data(), work, Map.of("FANSTORE_JOB_ID", job),
                List.of("--ranks", "2"), reader);
        ProcessHandle rank1 = null;
        try {
            j.awaitReady(2);
            rank1 = FaultsTest.Job.runtimeOf(job, 1);
            assertEquals(0, new ProcessBuilder("kill", "-STOP", Long.toString(rank1.pid())).start().waitFor());
            long stopped = System.nanoTime();
            Files.createFile(go);
            boolean finished = Await.within(Duration.ofSeconds(120),
                    () -> Files.exists(done) || !j.launcher.isAlive());
            double seconds = (System.nanoTime() - stopped) / 1e9;
            assertTrue(finished, () -> "rank 0's reader still reading 120 s after rank 1 stopped:\n" + j.stderr());
            assertTrue(Files.exists(done), () -> "the job ended (exit " + j.launcher.exitValue() + ") before rank 0's"
                    + " reader finished, " + seconds + " s after rank 1 stopped:\n" + j.stderr());
            List<FillReader.Result> results = FillReader.assertAllPerfect(out, 1, ds.files(), j.stderr());
            long slowest = results.get(0).maxMillis();
            System.out.printf("rank 1 stopped: rank 0 read all %d files right in %.1f s, slowest %d ms (%s)%n",
                    ds.files(), seconds, slowest, results.get(0).slowest());
            assertTrue(slowest < 10_000, "reading " + results.get(0).slowest() + " took " + slowest + " ms\n"
                    + j.stderr());
            assertEquals(0, new ProcessBuilder("kill", "-CONT", Long.toString(rank1.pid())).start().waitFor());
            assertTrue(j.launcher.waitFor(60, TimeUnit.SECONDS), () -> "job still running 60 s after rank 1 was"
                    + " continued:\n" + j.stderr());
            assertEquals(0, j.launcher.exitValue(), j.stderr());
            assertTrue(FaultsTest.gone(job, work), "directories left behind");
        } finally {
            if (rank1 != null && rank1.isAlive()) {
                new ProcessBuilder("kill", "-CONT", Long.toString(rank1.pid())).start().waitFor();
            }
            j.kill();
        }
    }

    /**
     * e. The statistics say where the bytes came from: 2 ranks, rank 0 reads every file once (prefetch on, the
     * default), {@code --stats}. Each rank's object carries {@code first_byte_ms}, {@code bytes_from_local},
     * {@code bytes_from_peer} and {@code bytes_from_sharedfs} (looked up anywhere inside the rank's object); rank 0,
     * which held nothing when its reader started, got bytes from a peer or the shared FS, no more than twice the
     * dataset, and its first byte came within the job's wall time.
     */
    @Test
    void theStatisticsSayWhereTheBytesCameFrom() throws Exception {
        Dataset ds = dataset("where", 60, 40 << 10, 5, 35);
        String job = "twhere" + System.nanoTime();
        Path out = work.resolve("out-" + job);
        Path json = work.resolve(job + ".json");
        Path program = FillReader.install(work);
        List<String> args = new ArrayList<>(List.of("run", "--ranks", "2", "--only-rank", "0", "--data",
                ds.data().toString(), "--local-dir", work.toString(), "--stats", json.toString(), "--"));
        args.addAll(List.of(FillReader.command(program, "/fanstore/where", ds.listing(), out, 1, 2, 1).split(" ")));
        FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 180,
                args.toArray(String[]::new)));
        FillReader.assertAllPerfect(out, 1, ds.files(), r.stderr());
        String script = """
                import json, sys
                d = json.load(open(sys.argv[1]))
                ABSENT = object()
                def find(o, key):
                    if isinstance(o, dict):
                        if key in o:
                            return o[key]
                        for v in o.values():
                            got = find(v, key)
                            if got is not ABSENT:
                                return got
                    elif isinstance(o, list):
                        for v in o:
                            got = find(v, key)
                            if got is not ABSENT:
                                return got
                    return ABSENT
                print("job wall_ms", int(d["job"]["wall_s"] * 1000))
                for r in d["ranks"]:
                    for k in ("first_byte_ms", "bytes_from_local", "bytes_from_peer", "bytes_from_sharedfs"):
                        v = find(r, k)
                        print(r["rank"], k, "MISSING" if v is ABSENT else json.dumps(v).replace(" ", ""))
                """;
        Process py = new ProcessBuilder("/usr/bin/python3", "-c", script, json.toString()).redirectErrorStream(true)
                .start();
        String parsed = new String(py.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, py.waitFor(), "python3 json.load: " + parsed + "\n" + Files.readString(json));
        Map<String, String> got = new HashMap<>();
        for (String line : parsed.split("\n")) {
            String[] f = line.trim().split(" ");
            got.put(f[0] + " " + f[1], f[2]);
        }
        String context = parsed + "\n" + Files.readString(json);
        for (int rank = 0; rank < 2; rank++) {
            for (String k : List.of("first_byte_ms", "bytes_from_local", "bytes_from_peer", "bytes_from_sharedfs")) {
                String v = got.get(rank + " " + k);
                // rank 1 ran no reader: its first_byte_ms may say so (0, -1, null); every byte count is a count
                boolean present = v != null && !v.equals("MISSING");
                assertTrue(present && (v.matches("\\d+") || rank == 1 && k.equals("first_byte_ms")),
                        "rank " + rank + " has no count " + k + " (" + v + ")\n" + context);
            }
        }
        long fromPeer = Long.parseLong(got.get("0 bytes_from_peer"));
        long fromShared = Long.parseLong(got.get("0 bytes_from_sharedfs"));
        long firstByte = Long.parseLong(got.get("0 first_byte_ms"));
        assertTrue(fromPeer + fromShared > 0, "rank 0 read everything but got nothing from a peer or the shared FS\n"
                + context);
        assertTrue(fromPeer + fromShared <= 2 * ds.bytes(), "rank 0 got " + (fromPeer + fromShared) + " bytes from"
                + " peers and the shared FS, more than twice the dataset (" + ds.bytes() + ")\n" + context);
        assertTrue(firstByte > 0 && firstByte <= Long.parseLong(got.get("job wall_ms")), "rank 0's first_byte_ms "
                + firstByte + "\n" + context);
        System.out.printf("stats, rank 0: first byte %d ms, %s B local, %d B from the peer, %d B from the shared FS"
                + " (dataset %d B)%n", firstByte, got.get("0 bytes_from_local"), fromPeer, fromShared, ds.bytes());
    }
}
