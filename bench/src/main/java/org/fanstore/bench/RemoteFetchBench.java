package org.fanstore.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;

import mpi.MPI;
import org.fanstore.prep.format.DiscardChannel;
import org.fanstore.runtime.mpi.FetchSource;
import org.fanstore.runtime.mpi.JobSecret;
import org.fanstore.runtime.mpi.MpiWorld;
import org.fanstore.runtime.mpi.RemoteFetcher;
import org.fanstore.runtime.mpi.RendezvousFile;
import org.fanstore.runtime.mpi.RendezvousServer;

/**
 * Remote-fetch throughput against raw MPJ request/response of the same sizes, in the same run (started by
 * bench/remote-fetch-bench.sh and bench/multinode-read.sh). Rank 0 measures; every other rank owns the objects and
 * answers both kinds of request, rank 0 asking them in turn (-Dbench.ranks=N, default 2: a world of N ranks, so
 * the baseline of an N-rank read is taken between the same number of rank JVMs; -Dbench.host=ADDR: the rendezvous
 * listens there, not on loopback). "Raw" is the floor a fetch is built on: a blocking Send of an 8-byte request
 * and a blocking Recv of the whole object into a preallocated array, no chunking, no deadline polling.
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
            System.out.printf("%10s %12s %12s %8s%n", "size", "raw MB/s", "fetch MB/s", "ratio");
            for (int size : SIZES) {
                double[] raw = new double[ROUNDS];
                double[] fetch = new double[ROUNDS];
                for (int round = 0; round < ROUNDS; round++) {
                    raw[round] = raw(size);
                    fetch[round] = fetch(fetcher, size);
                }
                double r = median(raw);
                double f = median(fetch);
                System.out.printf("%10s %12.0f %12.0f %8.2f%n", (size >> 10) + " KiB", r, f, f / r);
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
        try (RendezvousServer server = RendezvousServer.start(bind, RANKS, TIMEOUT)) {
            RendezvousFile.publish(dir, job, server.host(), server.port());
            MpiWorld world = MpiWorld.init(0, RANKS, server.host(), server.port(), TIMEOUT, psl);
            server.awaitCompletion();
            RendezvousFile.remove(dir, job);
            return world;
        }
    }

    private static MpiWorld join(int rank, Path dir, String job, int psl) throws Exception {
        RendezvousFile.Endpoint e = RendezvousFile.await(dir, job, TIMEOUT);
        return MpiWorld.init(rank, RANKS, e.host(), e.port(), TIMEOUT, psl);
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
