package org.fanstore.runtime.world;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.stream.IntStream;

import mpi.Intracomm;
import mpi.MPI;
import mpi.Request;
import org.fanstore.runtime.liveness.PeerLiveness;
import org.fanstore.runtime.liveness.RankFailedException;
import org.fanstore.runtime.membership.JobSecret;

/**
 * This JVM's membership in the job's MPJ Express (niodev) world: one per process, since MPJ keeps its
 * state in statics. Every operation is bounded by a timeout, because niodev never fails a wait on its
 * own: a missing rank makes {@code MPI.Init} wait forever, and a dead one makes receives starve.
 * After any {@link RankFailedException} the world is unusable (niodev has closed all channels): the runtime
 * either reports and exits, or (a node lost, --on-node-loss continue) {@link #leave}s it and goes on without MPJ.
 *
 * <p>The collectives here are built from Isend/Irecv polled against a deadline instead of MPJ's blocking
 * collectives, so a dead rank turns into an exception naming it within the timeout.
 */
public final class MpiWorld {
    /**
     * niodev sends messages up to this size eagerly and larger ones with a rendezvous round trip (the
     * sender waits until the receiver has posted its receive). MPJ's default, 128 KiB, puts a 128 KiB fetch
     * (128 KiB + a 24-byte header) on the slow path. notes/mpj-express.md suggests 16 MiB, which is best for
     * raw Send/Recv, but {@link RemoteFetcher} fetches of every size are faster with 512 KiB (its chunks and
     * the fill's ranges stay just under it, so they all go eagerly), and the rendezvous path also means a large
     * reply never sits in the receiver's memory as an unexpected message.
     */
    public static final int DEFAULT_PROTOCOL_SWITCH_LIMIT = 512 << 10;

    private static final AtomicBoolean CREATED = new AtomicBoolean();

    private final int rank;
    private final int size;
    private final Intracomm comm;
    private final PeerLiveness liveness;
    private int epoch;
    private volatile Consumer<RankFailedException> onFailure;
    /** Set in --on-node-loss continue: a peer found dead after ready makes this rank leave the world instead. */
    private volatile Consumer<RankFailedException> onLoss;
    /** Why this rank left the world (liveness/README.md, "A node lost after ready"), null while it is whole. */
    private volatile RankFailedException left;

    private MpiWorld(int rank, int size, PeerLiveness liveness) {
        this.rank = rank;
        this.size = size;
        this.comm = MPI.COMM_WORLD;
        this.liveness = liveness;
    }

    /** {@link #init(int, int, String, int, JobSecret, Duration, int)} with {@link #DEFAULT_PROTOCOL_SWITCH_LIMIT}. */
    public static MpiWorld init(int rank, int size, String host, int port, JobSecret secret, Duration timeout)
            throws IOException {
        return init(rank, size, host, port, secret, timeout, DEFAULT_PROTOCOL_SWITCH_LIMIT);
    }

    /**
     * Joins the world through the rendezvous server at {@code host:port} (see {@link RendezvousServer}), proving
     * it holds the job's {@code secret} ({@link RankJoin}).
     *
     * @throws IOException if the world is not complete within {@code timeout} (a rank is missing or
     *     cannot reach the server); MPJ's threads may linger, so the process should exit
     */
    public static MpiWorld init(int rank, int size, String host, int port, JobSecret secret, Duration timeout,
                                int protocolSwitchLimit) throws IOException {
        if (rank < 0 || rank >= size) {
            throw new IllegalArgumentException("rank " + rank + " is outside 0.." + (size - 1));
        }
        if (!CREATED.compareAndSet(false, true)) {
            throw new IllegalStateException("MPJ allows one world per JVM and it was already initialised");
        }
        MpjLogging.quiet();
        long deadline = BoundedWait.deadlineAfter(timeout);
        PeerLiveness liveness = new PeerLiveness(host, port);
        try {
            RankJoin.join(rank, size, host, port, secret, protocolSwitchLimit, deadline);
        } catch (IOException e) {
            liveness.close();
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("rank " + rank + ": interrupted in MPI.Init", e);
        }
        MpiWorld world = new MpiWorld(rank, size, liveness);
        int mpjRank = MPI.COMM_WORLD.Rank();
        if (mpjRank != rank || MPI.COMM_WORLD.Size() != size) {
            throw new IOException("MPJ assigned rank " + mpjRank + "/" + MPI.COMM_WORLD.Size() + " to rank "
                    + rank + "/" + size + "; the rendezvous table is inconsistent");
        }
        liveness.setPeers(world.allGather(liveness.endpoint(),
                Duration.ofNanos(Math.max(deadline - System.nanoTime(), ENDPOINTS_GATHER_MIN.toNanos()))));
        return world;
    }

    public int rank() {
        return rank;
    }

    public int size() {
        return size;
    }

    /**
     * Every rank's payload, indexed by rank (this rank's own included, not copied). Payloads may differ in
     * length and may be empty. All ranks must call it, in the same order relative to other collectives.
     *
     * @throws RankFailedException naming the ranks whose payload did not arrive in time (narrowed to the
     *     dead ones when a liveness probe can tell)
     */
    public synchronized byte[][] allGather(byte[] mine, Duration timeout) throws IOException {
        RankFailedException gone = left;
        if (gone != null) {
            throw new RankFailedException(gone.ranks(), "rank " + rank + ": no collective after leaving the world ("
                    + gone.getMessage() + ")");
        }
        long deadline = BoundedWait.deadlineAfter(timeout);
        int e = epoch++;
        int[] others = PeerLiveness.othersThan(rank, size);
        byte[][] all = new byte[size][];
        all[rank] = mine;
        int[][] lengths = new int[size][1];
        try {
            Request[] recvs = new Request[size];
            Request[] sends = new Request[size];
            int[] myLength = {mine.length};
            for (int peer : others) {
                recvs[peer] = comm.Irecv(lengths[peer], 0, 1, MPI.INT, peer, MpiTags.collectiveLengths(e));
            }
            for (int peer : others) {
                sends[peer] = comm.Isend(myLength, 0, 1, MPI.INT, peer, MpiTags.collectiveLengths(e));
            }
            awaitAll(recvs, sends, deadline, "exchanging payload lengths in allGather #" + e);
            for (int peer : others) {
                all[peer] = new byte[lengths[peer][0]];
                recvs[peer] = all[peer].length == 0 ? null
                        : comm.Irecv(all[peer], 0, all[peer].length, MPI.BYTE, peer, MpiTags.collectiveData(e));
                sends[peer] = mine.length == 0 ? null
                        : comm.Isend(mine, 0, mine.length, MPI.BYTE, peer, MpiTags.collectiveData(e));
            }
            awaitAll(recvs, sends, deadline, "exchanging payloads in allGather #" + e);
        } catch (RuntimeException mpjFailure) { // MPJ throws MPIException, a RuntimeException
            throw failure(others, "allGather #" + e + " failed in MPJ", mpjFailure);
        }
        return all;
    }

    /** Returns once every rank has called it; bounded like {@link #allGather}. */
    public void barrier(Duration timeout) throws IOException {
        allGather(new byte[0], timeout);
    }

    /**
     * Runs {@code MPI.Finalize} (itself a barrier over all ranks) on a daemon thread for at most
     * {@code timeout}; a dead peer makes it hang, so the caller should exit the process either way.
     *
     * @return whether MPJ finished cleanly
     */
    public boolean finalizeWorld(Duration timeout) {
        liveness.close();
        if (left != null) {
            return false;  // MPI.Finalize is a barrier over every rank: the lost one never comes
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread finisher = new Thread(() -> {
            try {
                MPI.Finalize();
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        }, "fanstore-mpi-finalize");
        finisher.setDaemon(true);
        finisher.start();
        try {
            done.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException | TimeoutException e) {
            return false;
        }
    }

    /**
     * Calls {@code listener} with every failure from now on: each {@link RankFailedException} this world
     * creates (a fetch or collective that failed or timed out), and a peer the watchdog finds dead. The runtime
     * ends the job on it: after such a failure niodev's channels are closed or a request is stuck for good.
     */
    public void onFailure(Consumer<RankFailedException> listener) {
        this.onFailure = listener;
    }

    /**
     * --on-node-loss continue: from now on a peer found dead (by the watch or after a failed exchange) makes this rank
     * {@link #leave} the world, and {@code listener} is called once with the lost ranks, instead of the failure
     * listener. A failure without a dead peer (a silent one) still goes to {@link #onFailure}.
     */
    public void onLoss(Consumer<RankFailedException> listener) {
        this.onLoss = listener;
    }

    /** Whether this rank has left the world after a node was lost: no MPJ call is made any more. */
    public boolean hasLeft() {
        return left != null;
    }

    /**
     * Leaves the world after {@code lost}: every send, receive and collective from now on throws at once
     * ({@link WorldLeftException}) instead of entering MPJ, whose device a peer's death made unusable on every rank,
     * and sends already parked inside MPJ are released ({@link WorldLeft}).
     *
     * @return whether this call left (false: it had already)
     */
    public boolean leave(RankFailedException lost) {
        synchronized (this.liveness) {
            if (left != null) {
                return false;
            }
            left = lost;
        }
        WorldLeft.startUnjammer(rank);
        return true;
    }

    /** The ranks whose loss made this rank leave the world; empty while it is whole. */
    public int[] lostRanks() {
        RankFailedException gone = left;
        return gone == null ? new int[0] : gone.ranks();
    }

    private void whole() {
        RankFailedException gone = left;
        if (gone != null) {
            throw new WorldLeftException("rank " + rank + " left the world: " + gone.getMessage());
        }
    }

    /** A confirmed loss: leaves and tells the loss listener once; false when no loss listener is set. */
    private boolean lose(PeerLiveness.Lost lost) {
        Consumer<RankFailedException> listener = onLoss;
        if (listener == null) {
            return false;
        }
        RankFailedException e = new RankFailedException(lost.ranks(), "rank " + rank + ": " + lost.describe());
        if (leave(e)) {
            listener.accept(e);
        }
        return true;
    }

    /**
     * Probes every peer's liveness port every {@code interval} on a daemon thread, so a rank whose process is
     * gone is noticed even when nothing is being fetched from it (otherwise only the job's final barrier would
     * find out, and a node whose command runs for days would never stop). A stopped (SIGSTOP) or merely slow
     * peer still accepts connections in the kernel and is not reported here: only a fetch timing out is.
     */
    public void watchPeers(Duration interval) {
        if (size < 2) {
            return;
        }
        Thread watchdog = new Thread(() -> {
            int[] others = PeerLiveness.othersThan(rank, size);
            while (true) {
                try {
                    Thread.sleep(interval.toMillis());
                } catch (InterruptedException e) {
                    return;
                }
                if (left != null) {
                    return;
                }
                PeerLiveness.Lost lost = liveness.lostAmong(others);
                if (lost.ranks().length > 0) {
                    if (lose(lost)) {
                        return;
                    }
                    notifyFailure(new RankFailedException(lost.ranks(), "rank " + rank + ": " + lost.describe()));
                    return;
                }
            }
        }, "fanstore-peer-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }

    private RankFailedException notifyFailure(RankFailedException e) {
        Consumer<RankFailedException> listener = onFailure;
        if (listener != null) {
            listener.accept(e);
        }
        return e;
    }

    Intracomm comm() {
        return comm;
    }

    /** Posts a send of {@code length} bytes of {@code message} to {@code dest}. */
    public Pending isend(byte[] message, int length, int dest, int tag) {
        whole();
        return new Pending(comm.Isend(message, 0, length, MPI.BYTE, dest, tag), this);
    }

    /** Posts a receive of up to {@code length} bytes into {@code into} from {@code source}. */
    public Pending irecv(byte[] into, int length, int source, int tag) {
        whole();
        return new Pending(comm.Irecv(into, 0, length, MPI.BYTE, source, tag), this);
    }

    /** Receives one message on {@code tag} from any rank into {@code into}, waiting without bound; its sender. */
    public int receiveFromAny(byte[] into, int tag) {
        whole();
        return comm.Recv(into, 0, into.length, MPI.BYTE, MPI.ANY_SOURCE, tag).source;
    }

    /** {@link PackedMessages#isend} in this world. */
    public Pending isendPacked(ByteBuffer buffer, int length, int dest, int tag) {
        whole();
        return new Pending(PackedMessages.isend(comm, buffer, length, dest, tag), this);
    }

    /** {@link PackedMessages#irecv} in this world. */
    public Pending irecvPacked(ByteBuffer buffer, int source, int tag) {
        whole();
        return new Pending(PackedMessages.irecv(comm, buffer, source, tag), this);
    }

    /**
     * The exception for a failed exchange with {@code suspects}: names those of them a liveness probe
     * finds dead, else (a peer's death closed the device, or the rest is merely slow) all suspects, else
     * any other dead rank.
     */
    public RankFailedException failure(int[] suspects, String what, Throwable cause) {
        return failure(suspects, what, cause, true);
    }

    /**
     * {@link #failure}; with {@code report} false the listener is not told: the caller has another source for what
     * failed (a fill transfer), and a peer that really died is reported by the liveness watch instead.
     */
    public RankFailedException failure(int[] suspects, String what, Throwable cause, boolean report) {
        RankFailedException gone = left;
        if (gone != null) {
            return new RankFailedException(suspects.clone(), "rank " + rank + ": " + what + ": this rank left the world"
                    + " after a node was lost (" + gone.getMessage() + ")");
        }
        PeerLiveness.Lost lost = liveness.lostAmong(suspects);
        if (lost.ranks().length == 0) {
            int[] others = IntStream.of(PeerLiveness.othersThan(rank, size))
                    .filter(r -> IntStream.of(suspects).noneMatch(s -> s == r)).toArray();
            lost = liveness.lostAmong(others);
        }
        if (lost.ranks().length > 0 && lose(lost)) {
            return new RankFailedException(lost.ranks(), "rank " + rank + ": " + what + ": " + lost.describe()
                    + "; this rank goes on without it (--on-node-loss continue)", cause);
        }
        int[] named = lost.ranks().length > 0 ? lost.ranks() : suspects.clone();
        String verdict = lost.ranks().length > 0 ? lost.describe()
                : RankFailedException.describe(named) + " did not answer";
        RankFailedException e = new RankFailedException(named, "rank " + rank + ": " + what + ": " + verdict
                + (cause == null ? "" : " (" + cause + ")")
                + "; the MPJ world is unusable now, stop this rank and check the failed rank's log", cause);
        return report ? notifyFailure(e) : e;
    }

    private void awaitAll(Request[] recvs, Request[] sends, long deadline, String what) throws IOException {
        boolean[] pending = new boolean[size];
        for (int peer = 0; peer < size; peer++) {
            if (recvs[peer] != null && BoundedWait.until(recvs[peer], deadline) != null) {
                recvs[peer] = null;
            }
            if (sends[peer] != null && BoundedWait.until(sends[peer], deadline) != null) {
                sends[peer] = null;
            }
            pending[peer] = recvs[peer] != null || sends[peer] != null;
        }
        int[] late = IntStream.range(0, size).filter(p -> pending[p]).toArray();
        if (late.length > 0) {
            throw failure(late, what + " timed out", null);
        }
        Arrays.fill(recvs, null);
        Arrays.fill(sends, null);
    }
}
