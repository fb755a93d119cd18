package org.fanstore.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import mpi.MPI;
import org.fanstore.prep.format.DiscardChannel;
import org.fanstore.runtime.fetch.FetchSource;
import org.fanstore.runtime.membership.JobSecret;
import org.fanstore.runtime.world.MpiWorld;
import org.fanstore.runtime.fetch.RemoteFetcher;
import org.fanstore.launcher.rendezvous.RendezvousFile;
import org.fanstore.launcher.rendezvous.RendezvousServer;

/**
 * Remote-fetch throughput against raw MPJ request/response of the same sizes, in the same run (started by
 * bench/remote-fetch-bench.sh and bench/multinode-read.sh). Rank 0 measures; every other rank owns the objects and
 * answers both kinds of request, rank 0 asking them in turn (-Dbench.ranks=N, default 2: a world of N ranks, so
 * the baseline of an N-rank read is taken between the same number of rank JVMs; -Dbench.host=ADDR: the rendezvous
 * listens there, not on loopback). "Raw" is the floor a fetch is built on: a blocking Send of an 8-byte request
 * and a blocking Recv of the whole object into a preallocated array, no chunking, no deadline polling.
 * -Dbench.land=DIR adds "raw landed": the same Send/Recv, each object then appended to a new file in DIR (the
 * local directory's file system) while the next is received, kept until the measurement ends, as a pull keeps
 * its files. It prices landing fetched bytes in fresh page-cache pages, which every path that makes remote files
 * local pays and raw does not (on a VM with free page reporting, a first touch of a page the host took back costs
 * far more than the copy).
 *
 * <p>Usage: {@code RemoteFetchBench <rank> <rendezvous-dir> <jobid> <protocolSwitchLimit> <chunkBytes>}
 */
public final class RemoteFetchBench {
    /** -Dbench.sizes=BYTES,...: the message sizes (bench/multinode-read.sh asks for the sizes of its files). */
    private static final int[] SIZES = Arrays.stream(System.getProperty("bench.sizes",
            (128 << 10) + "," + (2 << 20) + "," + (8 << 20)).split(",")).mapToInt(Integer::parseInt).toArray();
    private static final long BYTES_PER_MEASUREMENT = Long.getLong("bench.mib", 256) << 20;
    private static final int ROUNDS = 3;
    private static final int RANKS = Integer.getInteger("bench.ranks", 2);
    private static final int RAW_REQUEST_TAG = 7_000;
    private static final int RAW_REPLY_TAG = 7_001;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final String LAND = System.getProperty("bench.land");

    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(args[0]);
        Path dir = Path.of(args[1]);
        String job = args[2];
        int psl = Integer.parseInt(args[3]);
        int chunk = Integer.parseInt(args[4]);
        byte[] data = new byte[8 << 20];
        new SplittableRandom(42).nextBytes(data);

        MpiWorld world = rank == 0 ? serveAndJoin(dir, job, psl) : join(rank, dir, job, psl);
        // both ranks are this benchmark: any shared value will do, the check's cost is what counts
        JobSecret shared = JobSecret.of(new byte[JobSecret.BYTES]);
        RemoteFetcher fetcher = RemoteFetcher.start(world, new ArraySource(data), shared, 4, chunk);
        if (rank != 0) {
            answerRaw(data);
        } else {
            System.out.printf("protocol switch limit %d, chunk %d, %d rounds of %d MiB each, median MB/s%n",
                    psl, chunk, ROUNDS, BYTES_PER_MEASUREMENT >> 20);
            System.out.printf("%10s %12s %12s %8s %12s%n", "size", "raw MB/s", "fetch MB/s", "ratio",
                    "raw landed");
            for (int size : SIZES) {
                double[] raw = new double[ROUNDS];
                double[] fetch = new double[ROUNDS];
                double[] landed = new double[ROUNDS];
                for (int round = 0; round < ROUNDS; round++) {
                    raw[round] = raw(size);
                    fetch[round] = fetch(fetcher, size);
                    landed[round] = LAND == null ? Double.NaN : rawLanded(size, Path.of(LAND));
                }
                double r = median(raw);
                double f = median(fetch);
                System.out.printf("%10s %12.0f %12.0f %8.2f %12s%n", (size >> 10) + " KiB", r, f, f / r,
                        LAND == null ? "-" : String.format("%.0f", median(landed)));
            }
            for (int holder = 1; holder < RANKS; holder++) {
                MPI.COMM_WORLD.Send(new long[] {-1}, 0, 1, MPI.LONG, holder, RAW_REQUEST_TAG);
            }
        }
        world.barrier(TIMEOUT);
        fetcher.close(Duration.ofSeconds(5));
        world.finalizeWorld(Duration.ofSeconds(10));
        System.exit(0);
    }

    private static double raw(int size) {
        byte[] into = new byte[size];
        long[] request = {size};
        int n = iterations(size);
        for (int i = 0; i < 3; i++) {
            rawOnce(request, into, holder(i));
        }
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            rawOnce(request, into, holder(i));
        }
        return mbPerSecond(size, n, System.nanoTime() - start);
    }

    /**
     * {@link #raw}, each object then appended to a new file in {@code dir} by a second thread while the next one
     * is received (two arrays in turn), as a pull lands its ranges in a partition's file; the file goes once timed.
     */
    private static double rawLanded(int size, Path dir) throws Exception {
        byte[][] into = {new byte[size], new byte[size]};
        long[] request = {size};
        int n = iterations(size);
        Path file = Files.createTempFile(dir, "raw-landed-", ".tmp");
        ExecutorService writer = Executors.newSingleThreadExecutor();
        try (FileChannel out = FileChannel.open(file, StandardOpenOption.WRITE)) {
            landAll(request, into, 3, out, writer);
            long start = System.nanoTime();
            landAll(request, into, n, out, writer);
            return mbPerSecond(size, n, System.nanoTime() - start);
        } finally {
            writer.shutdown();
            Files.delete(file);
        }
    }

    private static void landAll(long[] request, byte[][] into, int n, FileChannel out, ExecutorService writer)
            throws Exception {
        Future<?> landing = null;
        for (int i = 0; i < n; i++) {
            byte[] arrived = into[i % 2];
            rawOnce(request, arrived, holder(i));
            if (landing != null) {
                landing.get();   // the other array is free again
            }
            landing = writer.submit(() -> {
                ByteBuffer b = ByteBuffer.wrap(arrived);
                while (b.hasRemaining()) {
                    out.write(b);
                }
                return null;
            });
        }
        if (landing != null) {
            landing.get();
        }
    }

    /** The rank asked for the i-th object: the holders in turn, as a reader's files fall across them. */
    private static int holder(int i) {
        return 1 + i % (RANKS - 1);
    }

    private static void rawOnce(long[] request, byte[] into, int holder) {
        MPI.COMM_WORLD.Send(request, 0, 1, MPI.LONG, holder, RAW_REQUEST_TAG);
        MPI.COMM_WORLD.Recv(into, 0, into.length, MPI.BYTE, holder, RAW_REPLY_TAG);
    }

    private static double fetch(RemoteFetcher fetcher, int size) throws IOException {
        DiscardChannel sink = DiscardChannel.INSTANCE;
        int n = iterations(size);
        for (int i = 0; i < 3; i++) {
            fetcher.fetch(holder(i), size, size, sink, TIMEOUT);
        }
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            fetcher.fetch(holder(i), size, size, sink, TIMEOUT);
        }
        return mbPerSecond(size, n, System.nanoTime() - start);
    }

    /** Every rank but 0: answers raw requests until rank 0 sends -1. */
    private static void answerRaw(byte[] data) {
        long[] request = new long[1];
        while (true) {
            MPI.COMM_WORLD.Recv(request, 0, 1, MPI.LONG, 0, RAW_REQUEST_TAG);
            if (request[0] < 0) {
                return;
            }
            MPI.COMM_WORLD.Send(data, 0, (int) request[0], MPI.BYTE, 0, RAW_REPLY_TAG);
        }
    }

    private static int iterations(int size) {
        return (int) Math.max(10, BYTES_PER_MEASUREMENT / size);
    }

    private static double mbPerSecond(long size, int n, long nanos) {
        return size * (double) n / 1e6 / (nanos / 1e9);
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    private static MpiWorld serveAndJoin(Path dir, String job, int psl) throws Exception {
        // -Dbench.host=ADDR: listen there (e.g. a veth address when the ranks run in two network namespaces).
        String host = System.getProperty("bench.host");
        InetAddress bind = host != null ? InetAddress.getByName(host) : InetAddress.getLoopbackAddress();
        JobSecret secret = JobSecret.generate();
        try (RendezvousServer server = RendezvousServer.start(bind, RANKS, secret, TIMEOUT)) {
            RendezvousFile.publishSecret(dir, job, secret);
            RendezvousFile.publish(dir, job, server.host(), server.port());
            MpiWorld world = MpiWorld.init(0, RANKS, server.host(), server.port(), secret, TIMEOUT, psl);
            server.awaitCompletion();
            RendezvousFile.remove(dir, job);
            return world;
        }
    }

    private static MpiWorld join(int rank, Path dir, String job, int psl) throws Exception {
        RendezvousFile.Endpoint e = RendezvousFile.await(dir, job, TIMEOUT);
        return MpiWorld.init(rank, RANKS, e.host(), e.port(), RendezvousFile.readSecret(dir, job), TIMEOUT, psl);
    }

    /** Object id = its size; bytes come from one random array, like a read served from the page cache. */
    private record ArraySource(byte[] data) implements FetchSource {
        @Override
        public long length(long id) {
            return id <= data.length ? id : NOT_HELD;
        }

        @Override
        public void read(long id, long position, ByteBuffer dst) {
            dst.put(data, (int) position, dst.remaining());
        }
    }
}
