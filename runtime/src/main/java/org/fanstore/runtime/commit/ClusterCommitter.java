package org.fanstore.runtime.commit;

import static org.fanstore.runtime.timing.Timing.*;
import static java.nio.charset.StandardCharsets.UTF_8;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

import org.fanstore.runtime.liveness.PeerLiveness;
import org.fanstore.runtime.liveness.RankFailedException;
import org.fanstore.runtime.output.OutputApplier;
import org.fanstore.runtime.output.OutputCommitter;
import org.fanstore.runtime.output.OutputOwner;
import org.fanstore.runtime.output.OutputRecord;
import org.fanstore.runtime.shm.Errno;
import org.fanstore.runtime.world.BoundedWait;
import org.fanstore.runtime.world.MpiTags;
import org.fanstore.runtime.world.MpiWorld;
import org.fanstore.runtime.world.Pending;

/**
 * Commits output records across the MPJ world. The writer sends the record to the rank that owns the directory it
 * changes ({@link #deciderOf}, {@link OutputOwner#of}); the owner checks it against its view, applies it, sends it
 * to every other rank and answers the writer only once every one of them has applied it and acknowledged. So when
 * a writer's close returns, a reader on any node already sees the file. Wire layout: {@link CommitProtocol}.
 *
 * <p>Decisions:
 * <ul>
 * <li>The owner decides one path at a time (a lock per stripe of key hashes, held from check to the last
 *   acknowledgement), so every rank applies the records of one path in the owner's order; an RMDIR excludes
 *   every change inside its directory (README, "One directory, one decider"). Two writers of one
 *   path: with {@code exclusive} the second gets EEXIST once the first is committed; without it the last
 *   decided commit wins on every rank.</li>
 * <li>A RENAME is decided by the owner of its <em>target</em>'s directory: that serialises it with every other
 *   change that lands on the target (the checkpoint idiom {@code os.replace(tmp, ckpt)} from two ranks ends with the
 *   same winner everywhere). Every rank then removes the source as it applies the rename. Changes to the
 *   <em>source</em> made at the same moment by another rank are not serialised with it (a temporary name
 *   is private to its writer in practice).</li>
 * <li>A rank that does not acknowledge within the writer's budget (dead, or the device closed) turns the commit
 *   into EIO, and the log names that rank. The world is unusable after such a failure: the job is ending.
 *   Ranks that did acknowledge keep the record.</li>
 * <li>Writer == owner decides in place, with no message to itself (niodev cannot deliver those); a world of
 *   one checks and applies with no MPJ at all.</li>
 * </ul>
 *
 * <p>Threads: one receiver blocked in {@code Recv(ANY_SOURCE, COMMIT_REQUEST)} (idle waiting, like the fetch
 * dispatcher's, ended by a peer's shutdown or the process), a small pool that decides proposals (they wait for
 * acknowledgements), and one applier thread that applies other owners' records in arrival order and
 * acknowledges. Appliers never wait for a decision, so two owners broadcasting to each other cannot deadlock.
 */
public final class ClusterCommitter implements OutputCommitter, AutoCloseable {
    private static final int STRIPES = 64;
    private static final int DECIDERS = 4;

    private final MpiWorld world;
    private final OutputApplier applier;
    private final Object[] stripes = new Object[STRIPES];
    /** Per stripe of directories: changes inside one share it, its RMDIR holds it alone. */
    private final ReentrantReadWriteLock[] directories = new ReentrantReadWriteLock[STRIPES];
    private final ExecutorService deciders;
    private final ExecutorService applies;
    private final Thread receiver;
    private final AtomicLong replySequence = new AtomicLong();
    /** Runs each Isend call, so that the caller can give up on it (see {@link #isend}). */
    private final ExecutorService senders = Executors.newCachedThreadPool(task -> {
        Thread t = new Thread(task, "fanstore-commit-send");
        t.setDaemon(true);
        return t;
    });
    /** The first failure seen: the world is unusable after it, so later commits fail at once, naming it. */
    private volatile RankFailedException broken;

    private ClusterCommitter(MpiWorld world, OutputApplier applier) {
        this.world = world;
        this.applier = applier;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Object();
            directories[i] = new ReentrantReadWriteLock();
        }
        this.deciders = pool(DECIDERS, "fanstore-commit-decider");
        this.applies = pool(1, "fanstore-commit-applier");
        this.receiver = new Thread(this::receive, "fanstore-commit-receiver");
        this.receiver.setDaemon(true);
    }

    /** Starts receiving other ranks' proposals and applies. Every rank must start one before any rank commits. */
    public static ClusterCommitter start(MpiWorld world, OutputApplier applier) {
        ClusterCommitter c = new ClusterCommitter(world, applier);
        if (world.size() > 1) {
            c.receiver.start();
        }
        return c;
    }

    /** The rank that decides about {@code r}: the owner of {@link #directoryOf its directory}. */
    public static int deciderOf(OutputRecord r, int worldSize) {
        return OutputOwner.of(directoryOf(r), worldSize);
    }

    /**
     * The directory whose entries {@code r} changes: the parent of its key (of a RENAME's target), "" at the top;
     * for an RMDIR the directory itself, whose emptiness it needs. So an RMDIR and every change inside that
     * directory meet at one rank, under one lock (README, "One directory, one decider").
     */
    static byte[] directoryOf(OutputRecord r) {
        if (r.kind() == OutputRecord.Kind.RMDIR) {
            return r.key();
        }
        byte[] path = r.kind() == OutputRecord.Kind.RENAME ? r.target() : r.key();
        int slash = path.length - 1;
        while (slash >= 0 && path[slash] != '/') {
            slash--;
        }
        return java.util.Arrays.copyOf(path, Math.max(slash, 0));
    }

    @Override
    public int commit(OutputRecord r, Duration timeout) {
        if (!CommitProtocol.fits(r)) {
            return Errno.ENAMETOOLONG;
        }
        // after a node was lost this rank has left the world: it decides its own commits (liveness/README.md)
        boolean alone = world.hasLeft();
        RankFailedException failed = broken;
        if (failed != null && !alone) {
            System.err.println("fanstore rank " + world.rank() + ": " + describe(r) + " not committed (EIO): "
                    + failed.getMessage());
            return Errno.EIO;
        }
        int owner = alone ? world.rank() : deciderOf(r, world.size());
        applier.committing(r);
        long deadline = BoundedWait.deadlineAfter(timeout);
        int errno = owner == world.rank() ? decide(r, world.rank(), deadline).errno : propose(owner, r, timeout);
        while (errno == Errno.ENOENT && owner != world.rank() && !world.hasLeft() && ownerBehind(r, deadline)) {
            errno = propose(owner, r, Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
        }
        if (errno == Errno.EIO && !alone && world.hasLeft() && owner != world.rank()) {
            errno = decide(r, world.rank(), BoundedWait.deadlineAfter(timeout)).errno;  // the loss came mid-commit
        }
        applier.settled(r);
        return errno;
    }

    /**
     * After the owner refused {@code r} with ENOENT: true, after a broadcast's time, when {@code r} still applies in
     * this rank's view and the deadline allows another try. The owner has not applied the parent this rank's writer
     * saw yet (README, "A parent one broadcast behind"); a parent really removed leaves this view too.
     */
    private boolean ownerBehind(OutputRecord r, long deadline) {
        if (applier.namespace().check(r) != 0) {
            return false;
        }
        try {
            Thread.sleep(OUTPUT_RETRY_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        return deadline - System.nanoTime() > 0 && applier.namespace().check(r) == 0;
    }

    /** The errno of a decision, and the rank that failed to acknowledge it (-1 if none). */
    private record Outcome(int errno, int failedRank) {
    }

    /** {@code origin}: the rank whose shim asked for {@code r}; every rank's applier is told it. */
    private Outcome decide(OutputRecord r, int origin, long deadline) {
        byte[] path = r.kind() == OutputRecord.Kind.RENAME ? r.target() : r.key();
        ReentrantReadWriteLock dir = directories[Math.floorMod(java.util.Arrays.hashCode(directoryOf(r)), STRIPES)];
        Lock held = r.kind() == OutputRecord.Kind.RMDIR ? dir.writeLock() : dir.readLock();
        held.lock();
        try {
            synchronized (stripes[Math.floorMod(java.util.Arrays.hashCode(path), STRIPES)]) {
                int errno = applier.namespace().check(r);
                if (errno != 0) {
                    return new Outcome(errno, -1);
                }
                applier.apply(r, origin);
                return broadcast(r, origin, deadline);
            }
        } finally {
            held.unlock();
        }
    }

    /** Sends a decided record to every other rank and waits for all their acknowledgements. */
    private Outcome broadcast(OutputRecord r, int origin, long deadline) {
        int[] peers = PeerLiveness.othersThan(world.rank(), world.size());
        if (peers.length == 0 || world.hasLeft()) {
            return new Outcome(0, -1);
        }
        int tag = MpiTags.commitReply(replySequence.getAndIncrement());
        int budget = (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
        byte[] message = CommitProtocol.encode(CommitProtocol.OP_APPLY, world.rank(), tag, budget, origin, r);
        byte[][] acks = new byte[world.size()][CommitProtocol.REPLY_BYTES];
        Pending[] acked = new Pending[world.size()];
        Pending[] sent = new Pending[world.size()];
        try {
            for (int peer : peers) {
                acked[peer] = world.irecv(acks[peer], acks[peer].length, peer, tag);
            }
            for (int peer : peers) {
                sent[peer] = isend(message, peer, MpiTags.COMMIT_REQUEST, deadline);
            }
            for (int peer : peers) {
                if (sent[peer] == null || !sent[peer].until(deadline) || !acked[peer].until(deadline)) {
                    RankFailedException e = world.failure(new int[] {peer}, "sending " + describe(r) + " to every rank",
                            null);
                    if (world.hasLeft()) {
                        return new Outcome(0, -1);  // applied here; the other survivors no longer share a world
                    }
                    report(r, e);
                    return new Outcome(Errno.EIO, peer);
                }
            }
        } catch (RuntimeException mpjFailure) { // MPJ throws MPIException, a RuntimeException
            // no cause: its text is a chain of MPJ class names, and the log is read by users
            RankFailedException e = world.failure(peers, "sending " + describe(r) + " to every rank failed in MPJ",
                    null);
            if (world.hasLeft()) {
                return new Outcome(0, -1);
            }
            report(r, e);
            return new Outcome(Errno.EIO, e.ranks()[0]);
        }
        return new Outcome(0, -1);
    }

    /** Writer side: asks the owner and waits for its answer, which comes after every rank applied the record. */
    private int propose(int owner, OutputRecord r, Duration timeout) {
        long deadline = BoundedWait.deadlineAfter(timeout);
        int tag = MpiTags.commitReply(replySequence.getAndIncrement());
        int budget = (int) Math.min(Integer.MAX_VALUE, Math.max(1, (long) (timeout.toMillis() * OWNER_SHARE)));
        byte[] message = CommitProtocol.encode(CommitProtocol.OP_PROPOSE, world.rank(), tag, budget, world.rank(),
                r);
        byte[] reply = new byte[CommitProtocol.REPLY_BYTES];
        try {
            Pending answered = world.irecv(reply, reply.length, owner, tag);
            Pending sent = isend(message, owner, MpiTags.COMMIT_REQUEST, deadline);
            if (sent == null || !sent.until(deadline) || !answered.until(deadline)) {
                report(r, world.failure(new int[] {owner}, "commit of " + describe(r) + " at its owner, rank " + owner
                        + ": no answer for " + timeout.toMillis() + " ms", null));
                return Errno.EIO;
            }
        } catch (RuntimeException mpjFailure) { // MPJ throws MPIException, a RuntimeException
            report(r, world.failure(new int[] {owner}, "commit of " + describe(r) + " at its owner, rank " + owner
                    + " failed in MPJ", null));
            return Errno.EIO;
        }
        int errno = CommitProtocol.replyErrno(reply);
        int failed = CommitProtocol.replyFailedRank(reply);
        if (failed >= 0) {
            System.err.println("fanstore rank " + world.rank() + ": commit of " + describe(r) + ": rank " + failed
                    + " did not apply it (its owner, rank " + owner + ", says so); the file is not committed");
        }
        return errno;
    }

    private void receive() {
        try {
            while (true) {
                byte[] raw = new byte[CommitProtocol.MESSAGE_BYTES];
                world.receiveFromAny(raw, MpiTags.COMMIT_REQUEST);
                CommitProtocol.Message m;
                try {
                    m = CommitProtocol.decode(raw);
                } catch (IllegalArgumentException malformed) {
                    System.err.println("fanstore rank " + world.rank() + ": ignored a commit message: "
                            + malformed.getMessage() + " (are all ranks from the same build?)");
                    continue;
                }
                switch (m.op()) {
                    case CommitProtocol.OP_SHUTDOWN -> {
                        return;
                    }
                    case CommitProtocol.OP_PROPOSE -> deciders.execute(() -> serveProposal(m));
                    case CommitProtocol.OP_APPLY -> applies.execute(() -> serveApply(m));
                    default -> System.err.println("fanstore rank " + world.rank() + ": ignored commit op " + m.op()
                            + " from rank " + m.sender());
                }
            }
        } catch (Exception | LinkageError e) {
            // the device closed (a peer died): writers waiting on this rank time out and name it
        }
    }

    private void serveProposal(CommitProtocol.Message m) {
        long deadline = BoundedWait.deadlineAfter(Duration.ofMillis(m.budgetMillis()));
        Outcome o = decide(m.record(), m.sender(), deadline);
        answer(m, CommitProtocol.reply(o.errno, o.failedRank));
    }

    private void serveApply(CommitProtocol.Message m) {
        applier.apply(m.record(), m.origin());
        answer(m, CommitProtocol.reply(0, -1));
    }

    private void answer(CommitProtocol.Message m, byte[] reply) {
        try {
            long deadline = BoundedWait.deadlineAfter(ACK_TIMEOUT);
            Pending r = isend(reply, m.sender(), m.replyTag(), deadline);
            if (r != null) {
                r.until(deadline);
            }
        } catch (RuntimeException | LinkageError e) {
            // the asker is gone or the device closed: its own deadline reports the failure
        }
    }

    /**
     * Isend, given up on at the deadline (null). niodev's Isend itself can block forever: after a send to a
     * dead peer failed, it keeps that peer's send semaphore, and every later Isend to the peer waits on it.
     *
     * @throws RuntimeException what MPJ threw (MPIException)
     */
    private Pending isend(byte[] message, int peer, int tag, long deadline) {
        Future<Pending> f = senders.submit(() -> world.isend(message, message.length, peer, tag));
        try {
            return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return null; // the sender thread stays parked in MPJ; the world is failing anyway
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
        }
    }

    private void report(OutputRecord r, RankFailedException e) {
        if (broken == null) {
            broken = e;
        }
        System.err.println("fanstore rank " + world.rank() + ": " + describe(r) + " not committed (EIO): "
                + e.getMessage());
    }

    private static String describe(OutputRecord r) {
        String key = new String(r.key(), UTF_8);
        return r.kind() == OutputRecord.Kind.RENAME ? "rename of " + key + " to " + new String(r.target(), UTF_8)
                : r.kind().name().toLowerCase(java.util.Locale.ROOT) + " " + key;
    }

    /**
     * Stops receiving. Every rank calls it after the job's final barrier, when nobody commits any more: the
     * shutdown it sends each peer ends that peer's receiver (a rank cannot end its own, see FetchDispatcher).
     *
     * @return whether the receiver stopped within the time allowed
     */
    public boolean close(Duration timeout) {
        long deadline = BoundedWait.deadlineAfter(timeout);
        if (world.size() > 1) {
            try {
                byte[] shutdown = CommitProtocol.encode(CommitProtocol.OP_SHUTDOWN, world.rank(), 0, 0, world.rank(),
                        null);
                Pending[] sent = new Pending[world.size()];
                for (int peer : PeerLiveness.othersThan(world.rank(), world.size())) {
                    sent[peer] = isend(shutdown, peer, MpiTags.COMMIT_REQUEST, deadline);
                }
                for (Pending s : sent) {
                    if (s != null) {
                        s.until(deadline);
                    }
                }
                receiver.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException | LinkageError e) {
                // a peer died: the daemon receiver stays parked until the process exits
            }
        }
        senders.shutdownNow();
        for (ExecutorService pool : new ExecutorService[] {deciders, applies}) {
            pool.shutdown();
            try {
                pool.awaitTermination(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            pool.shutdownNow();
        }
        return !receiver.isAlive();
    }

    @Override
    public void close() {
        close(SERVICE_CLOSE);
    }

    private static ExecutorService pool(int threads, String name) {
        AtomicInteger n = new AtomicInteger();
        return new ThreadPoolExecutor(threads, threads, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), task -> {
            Thread t = new Thread(task, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }
}
