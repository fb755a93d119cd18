package org.fanstore.runtime.commit;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.fanstore.runtime.fetch.PatternObjects;
import org.fanstore.runtime.fetch.RankMain;
import org.fanstore.runtime.fetch.RemoteFetcher;
import org.fanstore.runtime.membership.JobSecret;
import org.fanstore.runtime.output.DirectoryDrain;
import org.fanstore.runtime.output.FetchedOutputData;
import org.fanstore.runtime.output.MapOutputNamespace;
import org.fanstore.runtime.output.MapStaging;
import org.fanstore.runtime.output.OutputApplier;
import org.fanstore.runtime.output.OutputFetchSource;
import org.fanstore.runtime.output.OutputObjects;
import org.fanstore.runtime.output.OutputOwner;
import org.fanstore.runtime.output.OutputRecord;
import org.fanstore.runtime.world.MpiWorld;

/**
 * One rank of the output-commit process tests ({@link ClusterCommitterProcessTest}), in its own JVM. The
 * namespace is the in-memory stand-in; the upper directory (written as the shim would), staging links, the fetch,
 * the drain and MPJ are real.
 * Usage: {@code CommitRankMain <commit|survive> <rank> <size> <endpoint> <workdir>}. Exits 0 only if every
 * check held; prints one line per check.
 */
public final class CommitRankMain {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final int EEXIST = MapOutputNamespace.EEXIST;

    /** The same on every rank of the test, as a launcher hands one secret to a whole job. */
    private static final byte[] SHARED_SECRET = new byte[JobSecret.BYTES];

    private final MpiWorld world;
    private final int rank;
    private final Path work;
    private final Path upper;
    private final MapStaging staging = new MapStaging();
    private final MapOutputNamespace ns = new MapOutputNamespace(Set.of("input.bin"));
    private final DirectoryDrain drain;
    private final OutputApplier applier;
    private final ClusterCommitter committer;
    private final RemoteFetcher fetcher;
    private long nextId;

    private CommitRankMain(MpiWorld world, Path work) {
        this.world = world;
        this.rank = world.rank();
        this.work = work;
        this.nextId = OutputObjects.FIRST + ((long) rank << 32);
        this.upper = work.resolve("upper-" + rank);
        this.drain = new DirectoryDrain(work.resolve("out"), upper, rank, world.size(), ns, key -> false);
        this.applier = new OutputApplier(ns, upper, drain, rank);
        this.committer = ClusterCommitter.start(world, applier);
        drain.start();
        this.fetcher = RemoteFetcher.start(world, new OutputFetchSource(staging, new PatternObjects(rank)),
                JobSecret.of(SHARED_SECRET));
    }

    public static void main(String[] args) {
        try {
            System.exit(run(args)); // MPJ leaves non-daemon threads behind: always exit explicitly
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static int run(String[] args) throws Exception {
        MpiWorld world = RankMain.join(Integer.parseInt(args[1]), Integer.parseInt(args[2]), args[3]);
        CommitRankMain r = new CommitRankMain(world, Path.of(args[4]));
        world.barrier(TIMEOUT); // every committer receives before anyone commits
        int code = args[0].equals("commit") ? r.commitScenario() : r.surviveScenario();
        System.out.println("DONE rank " + world.rank() + " code " + code);
        System.out.flush();
        return code;
    }

    private int commitScenario() throws Exception {
        visibleEverywhereBeforeCommitReturns();
        exclusiveRace();
        lastCommitWins();
        renameAcrossOwners();
        remoteFetch();
        world.barrier(TIMEOUT); // nobody commits or fetches any more
        DirectoryDrain.Report report = drain.finish(TIMEOUT);
        System.out.println("DRAIN failed=" + report.failed() + " files=" + report.copiedFiles());
        for (Map.Entry<String, OutputRecord> e : ns.snapshot().entrySet()) {
            OutputRecord r = e.getValue();
            if (r.kind() == OutputRecord.Kind.FILE && r.holderRank() == rank) {
                System.out.println("EXPECT " + e.getKey() + " " + staging.file(r.objectId()));
            }
        }
        committer.close(Duration.ofSeconds(5));
        fetcher.close(Duration.ofSeconds(5));
        System.out.println("FINALIZED " + world.finalizeWorld(Duration.ofSeconds(10)));
        return report.failed().isEmpty() ? 0 : 1;
    }

    private void visibleEverywhereBeforeCommitReturns() throws Exception {
        expect(0, mkdir("r" + rank), "mkdir r" + rank);
        int[] owners = new int[world.size()];
        for (int i = 0; i < 16; i++) {
            String key = "r" + rank + "/f" + i;
            owners[OutputOwner.of(key.getBytes(UTF_8), world.size())]++;
            expect(0, commitFile(key, 1000 + 37 * i, false), "commit " + key);
        }
        // Every commit returned before this rank reached the barrier, so a peer past it must see them all.
        world.barrier(TIMEOUT);
        for (int r = 0; r < world.size(); r++) {
            for (int i = 0; i < 16; i++) {
                OutputRecord got = ns.lookup(("r" + r + "/f" + i).getBytes(UTF_8)).orElseThrow(
                        () -> new AssertionError("a committed file is missing on rank " + rank));
                check(new String(got.key(), UTF_8).startsWith("r" + got.holderRank() + "/"), "holder of " + got);
            }
        }
        System.out.println("VISIBLE_OK owners=" + Arrays.toString(owners));
    }

    private void exclusiveRace() throws Exception {
        if (rank == 0) {
            expect(0, mkdir("race"), "mkdir race");
        }
        int[] winners = new int[world.size()];
        for (int i = 0; i < 12; i++) {
            world.barrier(TIMEOUT);
            int errno = commitFile("race/k" + i, 100 + i, true);
            byte[][] all = world.allGather(ByteBuffer.allocate(4).putInt(errno).array(), TIMEOUT);
            int won = -1;
            for (int r = 0; r < all.length; r++) {
                int e = ByteBuffer.wrap(all[r]).getInt();
                check(e == 0 || e == EEXIST, "race k" + i + ": rank " + r + " got errno " + e);
                if (e == 0) {
                    check(won < 0, "race k" + i + ": two winners");
                    won = r;
                }
            }
            check(won >= 0, "race k" + i + ": no winner");
            winners[won]++;
            agreeOnHolder("race/k" + i, won);
        }
        System.out.println("RACE_OK winners=" + Arrays.toString(winners));
    }

    static final int LWW_KEYS = 32;

    private void lastCommitWins() throws Exception {
        if (rank == 0) {
            expect(0, mkdir("lww"), "mkdir lww");
        }
        world.barrier(TIMEOUT);
        // Many keys: both ranks commit each at about the same time, and the drain of the older copy must never
        // land over the newer one (it once did, in about one run of ten, with 8 keys).
        for (int i = 0; i < LWW_KEYS; i++) {
            expect(0, commitFile("lww/k" + i, 200 + i, false), "lww k" + i);
        }
        world.barrier(TIMEOUT);
        for (int i = 0; i < LWW_KEYS; i++) {
            agreeOnHolder("lww/k" + i, -1);
        }
        System.out.println("LWW_OK");
    }

    /** Every rank sees the same holder at key (and, if expected >= 0, that one). */
    private void agreeOnHolder(String key, int expected) throws Exception {
        int mine = ns.lookup(key.getBytes(UTF_8)).map(OutputRecord::holderRank).orElse(-2);
        byte[][] all = world.allGather(ByteBuffer.allocate(4).putInt(mine).array(), TIMEOUT);
        for (byte[] b : all) {
            int h = ByteBuffer.wrap(b).getInt();
            check(h == mine && (expected < 0 || h == expected), key + ": ranks disagree on the holder " + h + "/"
                    + mine + " (expected " + expected + ")");
        }
    }

    private void renameAcrossOwners() throws Exception {
        if (rank == 1) {
            expect(0, mkdir("ckpt"), "mkdir ckpt");
            String target = "ckpt/model.pt";
            String tmp = "ckpt/.tmp-0";
            for (int i = 1; OutputOwner.of(tmp.getBytes(UTF_8), world.size())
                    == OutputOwner.of(target.getBytes(UTF_8), world.size()); i++) {
                tmp = "ckpt/.tmp-" + i;
            }
            expect(0, commitFile(tmp, 4321, false), "commit " + tmp);
            long id = ns.lookup(tmp.getBytes(UTF_8)).orElseThrow().objectId();
            Files.move(upper.resolve(tmp), upper.resolve(target));  // the shim renames first, then commits
            expect(0, committer.commit(MapOutputNamespace.rename(tmp, target, rank, id), TIMEOUT), "rename");
            expect(MapOutputNamespace.EROFS, committer.commit(MapOutputNamespace.rename(target, "input.bin", rank,
                    id), TIMEOUT), "rename onto an input");
            expect(0, commitFile("junk", 10, false), "commit junk");
            Files.delete(upper.resolve("junk"));
            expect(0, committer.commit(MapOutputNamespace.unlink("junk"), TIMEOUT), "unlink junk");
            System.out.println("RENAMED " + tmp);
        }
        world.barrier(TIMEOUT);
        check(ns.lookup("ckpt/model.pt".getBytes(UTF_8)).map(OutputRecord::holderRank).orElse(-1) == 1,
                "the renamed file is not at its target on rank " + rank);
        check(ns.snapshot().keySet().stream().noneMatch(k -> k.startsWith("ckpt/.tmp")), "the source is still there");
        check(ns.lookup("junk".getBytes(UTF_8)).isEmpty(), "the unlinked file is still there");
        System.out.println("RENAME_OK");
    }

    private void remoteFetch() throws Exception {
        int size = (9 << 20) + 5;
        if (rank == 0) {
            expect(0, commitFile("big.bin", size, false), "commit big.bin");
        }
        world.barrier(TIMEOUT);
        if (rank != 0) {
            OutputRecord big = ns.lookup("big.bin".getBytes(UTF_8)).orElseThrow();
            FetchedOutputData data = new FetchedOutputData(rank, staging, fetcher, work.resolve("cache-" + rank));
            long start = System.nanoTime();
            Path copy = data.readable(big, TIMEOUT);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            check(Arrays.equals(Files.readAllBytes(copy), content(big.objectId(), size)), "fetched bytes differ");
            check(!Files.isWritable(copy) || !Files.getPosixFilePermissions(copy).toString().contains("WRITE"),
                    "the fetched copy is writable");
            check(data.readable(big, TIMEOUT).equals(copy), "a second open fetched again");
            System.out.println("FETCH_OK ms=" + ms + " path=" + copy);
        }
        world.barrier(TIMEOUT);
    }

    private int surviveScenario() throws Exception {
        System.out.println("READY");
        System.out.flush();
        String go = new BufferedReader(new InputStreamReader(System.in)).readLine();
        if (!"go".equals(go)) {
            return 2;
        }
        String owned = keyOwnedBy(1 - rank, "dead-owner");
        String local = keyOwnedBy(rank, "dead-peer");
        Duration bound = Duration.ofSeconds(3);
        long start = System.nanoTime();
        int e1 = commitFile(owned, 10, false, bound);
        long ms1 = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.println("DEAD_OWNER errno=" + e1 + " ms=" + ms1);
        start = System.nanoTime();
        int e2 = commitFile(local, 10, false, bound);
        long ms2 = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.println("DEAD_PEER errno=" + e2 + " ms=" + ms2);
        return 0;
    }

    private String keyOwnedBy(int owner, String prefix) {
        for (int i = 0; ; i++) {
            String k = prefix + i;
            if (OutputOwner.of(k.getBytes(UTF_8), world.size()) == owner) {
                return k;
            }
        }
    }

    private int commitFile(String key, int size, boolean exclusive) throws Exception {
        return commitFile(key, size, exclusive, TIMEOUT);
    }

    private int commitFile(String key, int size, boolean exclusive, Duration timeout) throws Exception {
        long id = nextId++;
        Path dir = work.resolve("stage-" + rank);
        Files.createDirectories(dir);
        Path file = upper.resolve(key);  // written in the upper as the shim does, then published
        Files.createDirectories(file.getParent());
        Files.write(file, content(id, size));
        Path link = dir.resolve("obj-" + Long.toHexString(id));
        applier.publishing(key.getBytes(UTF_8), id);  // as OutputService.publish does
        try {
            try {
                Files.createLink(link, file);
            } catch (java.nio.file.NoSuchFileException replaced) {
                // another rank's file of this key was decided before this publish began: ours is gone, theirs won
                return exclusive ? EEXIST : 0;
            }
            staging.put(id, link);
            java.time.Instant t = Files.getLastModifiedTime(link).toInstant();
            return committer.commit(new OutputRecord(OutputRecord.Kind.FILE, key.getBytes(UTF_8), null, size,
                    0100644, t.getEpochSecond() * 1_000_000_000L + t.getNano(), rank, id, exclusive), timeout);
        } finally {
            applier.notPublishing(key.getBytes(UTF_8), id);
        }
    }

    private int mkdir(String key) throws Exception {
        Files.createDirectories(upper.resolve(key));
        return committer.commit(MapOutputNamespace.dir(key), TIMEOUT);
    }

    static byte[] content(long id, int size) {
        byte[] b = new byte[size];
        new Random(id).nextBytes(b);
        return b;
    }

    private static void expect(int errno, int got, String what) {
        check(errno == got, what + ": expected errno " + errno + ", got " + got);
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
