package org.fanstore.runtime.placement;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * What readers ask of other ranks, as the open path reports it: on-demand fetches now running (the
 * {@link PartitionPuller} makes room for them), the partitions they missed on (pulled next), and how many
 * opens were fetched remotely or decoded from a local partition (logged to show when pulling made remote
 * fetches stop). Lock-free: it is touched on every open that is not a cache hit.
 */
public final class ReaderDemand {
    private final AtomicInteger running = new AtomicInteger();
    /** Partitions missed on, each once while queued: with nobody polling (--prefetch off) it stays at most the
     * partition count, and no open pays for its length (a bounded queue checked with size(), O(n) here, took 3%
     * of the CPU of a 4-rank cold pass). */
    private final ConcurrentLinkedQueue<Integer> missed = new ConcurrentLinkedQueue<>();
    private final Set<Integer> queued = ConcurrentHashMap.newKeySet();
    private final LongAdder remoteFetches = new LongAdder();
    private final LongAdder localDecodes = new LongAdder();
    private final LongAdder rodePull = new LongAdder();
    /** When a peer's reader last asked this rank for a file ({@link System#nanoTime()}); 0: never. */
    private volatile long peerReaderAt;
    private volatile ReaderCpu cpu;
    /** Readers waiting for ranges of a pull (they ride it): they fetch across the link too. */
    private final AtomicInteger riders = new AtomicInteger();
    private volatile Runnable onFetching = () -> { };

    /** Lets {@link #readersStarved} see this node's readers short of CPU. */
    public void attach(ReaderCpu readerCpu) {
        this.cpu = readerCpu;
    }

    /** How long this node's readers were judged short of CPU so far (0 without a {@link ReaderCpu}). */
    public long readersStarvedNanos() {
        ReaderCpu c = cpu;
        return c == null ? 0 : c.starvedNanos();
    }

    /** This node's readers read while its CPUs are contended (false until a {@link ReaderCpu} is attached). */
    public boolean readersStarved(long now) {
        ReaderCpu c = cpu;
        return c != null && c.readersStarved(now);
    }

    /** A peer's reader asked this rank (as holder) for a file, or a peer noted that its readers fetch
     * ({@link ReaderNotes}): that peer's readers are fetching now. */
    public void peerReaderRequest() {
        peerReaderAt = System.nanoTime();
    }

    /**
     * Whether readers are fetching across the link now: on-demand fetches of this rank running, or a peer's
     * reader request served within {@code recentNanos} (a peer's fetches are only seen when they arrive).
     */
    public boolean readersFetching(long now, long recentNanos) {
        return running.get() > 0 || peerAskedWithin(now, recentNanos);
    }

    private boolean peerAskedWithin(long now, long recentNanos) {
        long at = peerReaderAt;
        return at != 0 && now - at < recentNanos;
    }

    /**
     * Whether only peers' readers need this node now: a peer's reader asked it within {@code recentNanos}, while
     * this node's own readers fetch nothing and read nothing for {@code idleNanos} (false without a
     * {@link ReaderCpu}: nothing says they are idle).
     */
    public boolean onlyPeersRead(long now, long recentNanos, long idleNanos) {
        ReaderCpu c = cpu;
        return peerAskedWithin(now, recentNanos) && running.get() == 0 && c != null && c.idle(now, idleNanos);
    }

    /** Runs {@code listener} (quick, non-blocking) whenever a reader starts fetching or riding. */
    public void whenFetching(Runnable listener) {
        this.onFetching = listener;
    }

    /** Whether this node's readers fetch across the link now: on demand, or riding a pull. */
    public boolean readersAcrossLink() {
        return running.get() > 0 || riders.get() > 0;
    }

    /** A reader starts waiting for ranges of a partition being pulled. */
    public void rideStarted() {
        riders.incrementAndGet();
        onFetching.run();
    }

    public void rideEnded() {
        riders.decrementAndGet();
    }

    /** A reader starts fetching an entry of a partition this node does not hold. */
    public void fetchStarted(int partition) {
        running.incrementAndGet();
        onFetching.run();
        remoteFetches.increment();
        if (queued.add(partition)) {
            missed.add(partition);
        }
    }

    public void fetchEnded() {
        running.decrementAndGet();
    }

    /** A reader's file was read from the ranges of a partition being pulled (it rode the pull). */
    public void rodePull() {
        rodePull.increment();
    }

    public long rodePullCount() {
        return rodePull.sum();
    }

    /** A reader's file was decoded from a partition on this node. */
    public void decodedLocally() {
        localDecodes.increment();
    }

    /** On-demand fetches running now. */
    public int running() {
        return running.get();
    }

    /** The oldest partition a reader missed on and not handed out yet, or -1. */
    public int nextMissed() {
        Integer p = missed.poll();
        if (p == null) {
            return -1;
        }
        queued.remove(p);
        return p;
    }

    public long remoteFetches() {
        return remoteFetches.sum();
    }

    public long localDecodes() {
        return localDecodes.sum();
    }
}
