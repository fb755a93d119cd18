package org.fanstore.runtime.fetch;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.fanstore.runtime.liveness.RankFailedException;
import org.fanstore.runtime.membership.JobSecret;
import org.fanstore.launcher.rendezvous.RendezvousFile;
import org.fanstore.launcher.rendezvous.RendezvousServer;
import org.fanstore.runtime.world.MpiWorld;
import org.fanstore.runtime.world.RankJoin;

/**
 * One rank of a multi-process test, run in its own JVM by {@link RankProcesses}. Prints progress lines the
 * test reads, and exits 0 only if everything it checked held.
 *
 * <p>Usage: {@code RankMain <scenario> <rank> <size> <endpoint> <chunkBytes> <threads>}, where endpoint is
 * {@code HOST:PORT} (a launcher's server) or {@code file:<dir>:<jobid>} (rank 0 serves and publishes).
 * Scenarios: {@code exercise} (allGather, fetches, concurrency, clean shutdown) and {@code survive}
 * (set up, print READY, wait for "go" on stdin after a peer is killed, then report how fetch and allGather fail),
 * {@code rogue} (2 ranks; rank 1 holds a different job secret than rank 0: it asks rank 0 for an object and
 * must be refused with UNAUTHORIZED and get no byte; rank 0 checks that its own fetch from rank 1 is refused too).
 */
public final class RankMain {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    public static void main(String[] args) {
        try {
            System.exit(run(args)); // MPJ leaves non-daemon threads behind: always exit explicitly
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static int run(String[] args) throws Exception {
        String scenario = args[0];
        int rank = Integer.parseInt(args[1]);
        int size = Integer.parseInt(args[2]);
        int chunkBytes = Integer.parseInt(args[4]);
        int threads = Integer.parseInt(args[5]);
        MpiWorld world = join(rank, size, args[3]);
        assertNiodevPortsClosed();
        boolean rogue = scenario.equals("rogue");
        RemoteFetcher fetcher = RemoteFetcher.start(world, new PatternObjects(rank),
                secret(rogue && rank == 1 ? 1 : 0), 4, chunkBytes);
        int code;
        if (rogue) {
            code = rogue(world, fetcher);
        } else if (scenario.equals("exercise")) {
            exercise(world, fetcher, threads);
            fetcher.close(Duration.ofSeconds(5));
            System.out.println("FINALIZED " + world.finalizeWorld(Duration.ofSeconds(10)));
            code = 0;
        } else {
            code = survive(world, fetcher, Integer.parseInt(args[6]));
        }
        System.out.println("DONE rank " + rank);
        System.out.flush();
        return code;
    }

    /** The secrets of the rogue scenario differ in the last byte only: the whole secret must be compared. */
    private static JobSecret secret(int last) {
        byte[] b = new byte[JobSecret.BYTES];
        Arrays.fill(b, (byte) 7);
        b[JobSecret.BYTES - 1] = (byte) last;
        return JobSecret.of(b);
    }

    /** Each rank asks the other for a 9 MiB object; both must be refused before any byte reaches the sink. */
    private static int rogue(MpiWorld world, RemoteFetcher fetcher) throws Exception {
        int owner = 1 - world.rank();
        long id = PatternObjects.id(owner, 4);
        var sink = new PatternObjects.CheckingSink(id, 0);
        try {
            fetcher.fetch(owner, id, PatternObjects.SIZES[4], sink, TIMEOUT);
            System.out.println("FETCHED " + sink.position() + " bytes (unexpected)");
            return 1;
        } catch (RemoteFetchException e) {
            System.out.println("REFUSED " + e.reason() + " bytes=" + sink.position());
        }
        world.barrier(TIMEOUT); // both were refused and still share a working world
        System.out.println("BARRIER_OK");
        System.out.flush();
        return 0;
    }

    /** niodev listens on every interface during init; after it, nothing may accept on its two ports. */
    private static void assertNiodevPortsClosed() throws java.io.IOException {
        for (int port : RankJoin.niodevPorts()) {
            try (java.net.Socket s = new java.net.Socket()) {
                s.connect(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1_000);
                throw new AssertionError("niodev's port " + port + " still accepts connections after init");
            } catch (java.net.ConnectException refused) {
                // closed, as it must be
            }
        }
        System.out.println("NIODEV_PORTS_CLOSED");
    }

    /** The secret the test ranks join with, as a launcher gives one to a job (the rogue's fetch secret differs). */
    public static final JobSecret JOIN_SECRET = JobSecret.of(new byte[JobSecret.BYTES]);

    public static MpiWorld join(int rank, int size, String endpoint) throws Exception {
        if (!endpoint.startsWith("file:")) {
            int colon = endpoint.lastIndexOf(':');
            return MpiWorld.init(rank, size, endpoint.substring(0, colon),
                    Integer.parseInt(endpoint.substring(colon + 1)), JOIN_SECRET, TIMEOUT);
        }
        String[] parts = endpoint.split(":");
        Path dir = Path.of(parts[1]);
        String job = parts[2];
        if (rank != 0) {
            RendezvousFile.Endpoint e = RendezvousFile.await(dir, job, TIMEOUT);
            return MpiWorld.init(rank, size, e.host(), e.port(), JOIN_SECRET, TIMEOUT);
        }
        try (RendezvousServer server =
                RendezvousServer.start(InetAddress.getLoopbackAddress(), size, JOIN_SECRET, TIMEOUT)) {
            RendezvousFile.publish(dir, job, server.host(), server.port());
            MpiWorld world = MpiWorld.init(0, size, server.host(), server.port(), JOIN_SECRET, TIMEOUT);
            server.awaitCompletion();
            RendezvousFile.remove(dir, job);
            return world;
        }
    }

    private static void exercise(MpiWorld world, RemoteFetcher fetcher, int threads) throws Exception {
        int rank = world.rank();
        // allGather: each rank's payload has a different length, rank 1's is empty, rank 2's is 5 MiB.
        for (int round = 0; round < 2; round++) {
            byte[][] all = world.allGather(payload(rank, round), TIMEOUT);
            for (int r = 0; r < world.size(); r++) {
                if (!Arrays.equals(all[r], payload(r, round))) {
                    throw new AssertionError("allGather round " + round + ": payload of rank " + r + " differs");
                }
            }
        }
        System.out.println("ALLGATHER_OK");

        long start = System.nanoTime();
        fetchEverything(world, fetcher);
        System.out.println("SEQUENTIAL_MS " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        fetchIntoFile(world, fetcher);
        expectRefusals(world, fetcher);
        System.out.println("FETCH_OK");

        start = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            running.add(pool.submit(() -> {
                fetchEverything(world, fetcher);
                return null;
            }));
        }
        for (Future<?> f : running) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        System.out.println("CONCURRENT_OK " + threads + " ms "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        world.barrier(TIMEOUT); // nobody fetches from a rank that stopped serving
        // after the barrier: every peer has fetched whole objects and ranges from this rank
        System.out.println("PRIORITY readers=" + niceOf("fanstore-fetch-") + " pulls=" + niceOf("fanstore-pull-s"));
    }

    /**
     * The nice values (field 19 of /proc/self/task/T/stat) of this process's threads whose name (comm: its first 15
     * characters) is {@code comm}, as a sorted set.
     */
    private static String niceOf(String comm) throws Exception {
        java.util.TreeSet<Integer> nice = new java.util.TreeSet<>();
        try (var tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    if (Files.readString(t.resolve("comm")).strip().equals(comm)) {
                        String stat = Files.readString(t.resolve("stat"));
                        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        nice.add(Integer.parseInt(f[16])); // fields from 3 (state) on: nice is field 19
                    }
                } catch (java.nio.file.NoSuchFileException e) {
                    // the thread ended meanwhile
                }
            }
        }
        return nice.toString();
    }

    private static void fetchEverything(MpiWorld world, RemoteFetcher fetcher) throws Exception {
        for (int owner = 0; owner < world.size(); owner++) {
            if (owner == world.rank()) {
                continue;
            }
            for (int k = 0; k < PatternObjects.SIZES.length; k++) {
                long id = PatternObjects.id(owner, k);
                var sink = new PatternObjects.CheckingSink(id, 0);
                fetcher.fetch(owner, id, PatternObjects.SIZES[k], sink, TIMEOUT);
                if (sink.position() != PatternObjects.SIZES[k]) {
                    throw new AssertionError("object " + id + ": got " + sink.position() + " bytes");
                }
            }
            long id = PatternObjects.id(owner, 4);
            var range = new PatternObjects.CheckingSink(id, 1_000_003);
            fetcher.fetchRange(owner, id, 1_000_003, 5_000_000, range, TIMEOUT);
            if (range.position() != 6_000_003) {
                throw new AssertionError("range of object " + id + " ended at " + range.position());
            }
        }
    }

    private static void fetchIntoFile(MpiWorld world, RemoteFetcher fetcher) throws Exception {
        int owner = (world.rank() + 1) % world.size();
        long id = PatternObjects.id(owner, 4);
        Path file = Files.createTempFile("fanstore-fetch-", ".bin");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            fetcher.fetch(owner, id, PatternObjects.SIZES[4], ch, TIMEOUT);
        }
        byte[] got = Files.readAllBytes(file);
        Files.delete(file);
        for (int i = 0; i < got.length; i++) {
            if (got[i] != PatternObjects.at(id, i)) {
                throw new AssertionError("file copy of object " + id + " differs at byte " + i);
            }
        }
        if (got.length != PatternObjects.SIZES[4]) {
            throw new AssertionError("file copy of object " + id + " has " + got.length + " bytes");
        }
    }

    private static void expectRefusals(MpiWorld world, RemoteFetcher fetcher) throws Exception {
        int owner = (world.rank() + 1) % world.size();
        expectRefusal(() -> fetcher.fetch(owner, PatternObjects.id(owner, 999), 10,
                new PatternObjects.CheckingSink(0, 0), TIMEOUT), RemoteFetchException.Reason.NOT_HELD);
        expectRefusal(() -> fetcher.fetch(owner, PatternObjects.id(owner, 3), 5,
                new PatternObjects.CheckingSink(0, 0), TIMEOUT), RemoteFetchException.Reason.BAD_RANGE);
        expectRefusal(() -> fetcher.fetchRange(owner, PatternObjects.id(owner, 1), 0, 2,
                new PatternObjects.CheckingSink(0, 0), TIMEOUT), RemoteFetchException.Reason.BAD_RANGE);
    }

    interface Action {
        void run() throws Exception;
    }

    private static void expectRefusal(Action action, RemoteFetchException.Reason expected) throws Exception {
        try {
            action.run();
        } catch (RemoteFetchException e) {
            if (e.reason() != expected) {
                throw new AssertionError("expected " + expected + ", got " + e.reason(), e);
            }
            return;
        }
        throw new AssertionError("expected a refusal " + expected);
    }

    private static byte[] payload(int rank, int round) {
        int length = switch (rank) {
            case 1 -> 0;
            case 2 -> 5 << 20;
            default -> 17 * rank + round + 3;
        };
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = PatternObjects.at(rank * 31L + round, i);
        }
        return b;
    }

    /** Returns 0 if both the fetch from {@code victim} and an allGather failed naming it within 10 s. */
    private static int survive(MpiWorld world, RemoteFetcher fetcher, int victim) throws Exception {
        world.barrier(TIMEOUT);
        System.out.println("READY");
        System.out.flush();
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in));
        if (!"go".equals(stdin.readLine())) {
            return 2;
        }
        Duration wait = Duration.ofSeconds(5);
        boolean fetchNamed = reportFailure("FETCH", victim, () -> fetcher.fetch(victim,
                PatternObjects.id(victim, 3), PatternObjects.SIZES[3],
                new PatternObjects.CheckingSink(PatternObjects.id(victim, 3), 0), wait));
        boolean gatherNamed = reportFailure("ALLGATHER", victim, () -> world.allGather(new byte[10], wait));
        // MPJ's device is poisoned between the survivors too (liveness/README.md, "A node lost after ready"): a
        // fetch from the other survivor fails or parks inside Isend for good, so it runs on a thread given 8 s
        int other = 3 - victim - world.rank();
        String[] survivorFetch = {"BLOCKED"};
        Thread t = new Thread(() -> {
            try {
                fetcher.fetch(other, PatternObjects.id(other, 3), PatternObjects.SIZES[3],
                        new PatternObjects.CheckingSink(PatternObjects.id(other, 3), 0), wait);
                survivorFetch[0] = "OK";
            } catch (Exception e) {
                survivorFetch[0] = "FAILED";
            }
        });
        t.setDaemon(true);
        t.start();
        t.join(8_000);
        System.out.println("SURVIVOR_FETCH_" + survivorFetch[0]);
        System.out.flush();
        // Stay until every survivor has reported: one that left early would be a second dead rank to the others.
        return fetchNamed && gatherNamed && "exit".equals(stdin.readLine()) ? 0 : 1;
    }

    private static boolean reportFailure(String what, int victim, Action action) {
        long start = System.nanoTime();
        try {
            action.run();
            System.out.println(what + "_SUCCEEDED (unexpected)");
            return false;
        } catch (RankFailedException e) {
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            System.out.println(what + "_FAILED ranks=" + Arrays.toString(e.ranks()) + " ms=" + ms
                    + " msg=" + e.getMessage());
            return Arrays.equals(e.ranks(), new int[] {victim}) && ms < 10_000;
        } catch (Exception e) {
            System.out.println(what + "_WRONG_EXCEPTION " + e);
            return false;
        }
    }
}
