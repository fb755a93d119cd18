package org.fanstore.runtime.placement;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;

/**
 * Tells the other ranks, every {@link #INTERVAL_NANOS} while this node's readers fetch across the link (on demand
 * or riding a pull), that they do. A rank learns of a peer's readers only when they ask it for a file; a node
 * whose own readers are idle would otherwise pull at full speed from the very holders those readers wait on, on
 * the links and CPUs they use. With the note, its {@link PartitionPuller} takes the peers-only floor there too
 * (4 ranks on this 2-core machine, rank 0 reading 8 MiB files cold: the three idle ranks pulled ~50-100 MB/s
 * each through the pass, bench/RESULTS.md).
 *
 * <p>At most {@link #FANOUT} peers per round, the next ones in turn: in a large world every node's readers fetch
 * anyway during a first epoch, and a note to each of 1,000 peers every 10 ms would cost more than it saves. One
 * daemon thread, parked while readers fetch nothing.
 */
public final class ReaderNotes implements AutoCloseable {
    /** A round of notes at most this often; under {@link PartitionPuller#PEER_READERS_NANOS}, so notes overlap. */
    static final long INTERVAL_NANOS = 10_000_000L;
    static final int FANOUT = 32;
    /** A peer that does not take a note within this long is skipped (it is advisory). */
    private static final Duration SEND_TIMEOUT = Duration.ofMillis(100);

    /** Sends one round: RemoteFetcher#noteReadersFetching. */
    private final BiConsumer<int[], Duration> send;
    private final ReaderDemand demand;
    private final int[] peers;
    private final Thread thread;
    private volatile boolean closed;
    /** The thread parks until readers fetch again (set before it checks once more, so no wake-up is lost). */
    private volatile boolean idle;
    /** The index into {@link #peers} of the next peer to note. */
    private int next;

    public ReaderNotes(BiConsumer<int[], Duration> send, ReaderDemand demand, int rank, int worldSize) {
        this.send = send;
        this.demand = demand;
        this.peers = new int[Math.max(0, worldSize - 1)];
        for (int i = 0; i < peers.length; i++) {
            peers[i] = (rank + 1 + i) % worldSize;   // the next ranks first: notes spread over the world
        }
        this.thread = new Thread(this::run, "fanstore-reader-notes");
        thread.setDaemon(true);
        if (peers.length > 0) {
            demand.whenFetching(this::wake);
            thread.start();
        }
    }

    private void run() {
        while (!closed) {
            if (!demand.readersAcrossLink()) {
                idle = true;
                if (!demand.readersAcrossLink()) {
                    LockSupport.parkNanos(1_000_000_000L);   // woken when one starts; bounded all the same
                }
                idle = false;
                continue;
            }
            send.accept(nextRound(), SEND_TIMEOUT);
            // a round per interval, however many fetches start meanwhile: waking for each (2,000 rides/s at
            // 128 KiB) sent a round per ride and cost the reading rank a fifth of its first pass
            long due = System.nanoTime() + INTERVAL_NANOS;
            for (long left; !closed && (left = due - System.nanoTime()) > 0; ) {
                LockSupport.parkNanos(left);
            }
        }
    }

    /** From a reader's thread as its fetch or ride starts: wakes the thread only if it idles. */
    private void wake() {
        if (idle) {
            LockSupport.unpark(thread);
        }
    }

    private int[] nextRound() {
        int n = Math.min(FANOUT, peers.length);
        int[] round = new int[n];
        for (int i = 0; i < n; i++) {
            round[i] = peers[next];
            next = (next + 1) % peers.length;
        }
        return round;
    }

    /** Stops the notes; must run before the fetch dispatchers stop (a note then would meet no receive). */
    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
        try {
            if (thread.isAlive()) {
                thread.join(2 * SEND_TIMEOUT.toMillis() + 1_000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
