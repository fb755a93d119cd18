package org.fanstore.runtime.placement;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import java.util.zip.CRC32C;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.runtime.mpi.MpiWorld;
import org.fanstore.runtime.mpi.RemoteFetcher;
import org.fanstore.runtime.layout.RankDirectory;

/**
 * Makes remote files local: after ready, copies the regular partitions this node does not hold from their
 * holders (owner first, then replicas) into the local partition directory, in ranges of {@link #CHUNK_BYTES}
 * with up to {@link #IN_FLIGHT} in flight, so later opens of their files are decoded here instead of fetched
 * one by one (a cold remote open costs a round trip per file; a partition moves at the link's speed).
 *
 * <p>Invariants: a partition is written under {@code .pull-<name>}, checked against the manifest's
 * whole-file CRC32C, and only then renamed and added to {@link LocalPartitions}; a failed pull (a full disk,
 * a holder gone) removes its temporary file and leaves that partition fetched on demand, so prefetching never
 * fails a read. Readers go first: while readers fetch across the link, this rank's (an on-demand fetch running)
 * or a peer's (that peer asked this rank for a file in the last {@link #PEER_READERS_NANOS}), a new range starts
 * at most every {@link #READERS_FIRST_NANOS} (pausing altogether would starve the pull for as long as an epoch
 * keeps missing, i.e. for ever), and holders serve readers' requests ahead of queued ranges (FetchDispatcher).
 * The peer's side is what pays: a reader's request and its reply share the one connection per pair with both
 * ranks' pull messages (508 KiB each), and the peer's pull of THIS rank's partitions is invisible to this rank's
 * demand alone. Pacing on local demand only (one range per 10 ms) showed no gain; with the peer's signal the
 * first pass gained 30-40% at 2 ranks and 2x at 4 (bench/RESULTS.md, "cold remote open: ring and wake-up
 * stages, readers first across the link").
 *
 * <p>Order: a partition a reader just missed on comes first (the epoch is reading it now); otherwise the
 * partitions owned by rank+1, then rank+2, and so on. At the start every rank pulls at once, and rank r
 * pulling from r+1 while r+1 pulls from r+2 gives every holder one puller instead of all ranks queueing at
 * rank 0. When {@link LocalCapacity} cannot hold them all, the ones reached first in that order are kept and
 * a partition that does not fit is skipped for a smaller one that may: for a reader sampling uniformly every
 * partition is worth the same, so filling the budget matters more than which ones fill it.
 */
public final class PartitionPuller implements AutoCloseable {
    /**
     * Ranges just under MPJ's protocol switch limit, so every reply goes eagerly: with multi-MiB ranges
     * (rendezvous sends) two ranks pulling from each other deadlocked niodev within a few runs (threads parked
     * for good in NIODevice.isend's semaphore on both sides); with 508 KiB ranges, none in 15 runs, at the same
     * speed (2 ranks on 2 cores: ~450 MB/s each way, vs ~100 MB/s for 8 MiB ranges when they did not stall).
     */
    static final int CHUNK_BYTES = MpiWorld.DEFAULT_PROTOCOL_SWITCH_LIMIT - 4096;
    /** While readers fetch, at most one range starts per this long: the pull's floor (~50 MB/s). */
    static final long READERS_FIRST_NANOS = 10_000_000L;
    /** A peer's reader request served this recently counts as readers fetching now. */
    static final long PEER_READERS_NANOS = 20_000_000L;
    /** Three of a holder's four fetch workers at most, so one stays free for readers' on-demand fetches. */
    static final int IN_FLIGHT = 3;
    private static final int CHECK_BUFFER = 1 << 20;
    private static final String MARKER = RankDirectory.PREFETCHED.fileName();

    private final List<PartitionInfo> order;
    private final Placement placement;
    private final int rank;
    private final LocalPartitions local;
    private final RemoteFetcher fetcher;
    private final Path partsDir;
    private final LocalCapacity capacity;
    private final ReaderDemand demand;
    private final Duration timeout;
    private final Path shmDir;
    private final boolean verbose;
    private final ExecutorService chunks;
    private final Thread thread;
    private volatile boolean stopping;
    private volatile boolean allLocal;
    private volatile long remoteBeforeAllLocal;
    private volatile long localBeforeAllLocal;
    private volatile int pulledPartitions;
    private volatile long pulledBytes;
    private volatile IntConsumer whenAdded;

    /** Called on the pulling thread with each partition id just added to the local copies. */
    public void whenAdded(IntConsumer listener) {
        this.whenAdded = listener;
    }

    public PartitionPuller(Manifest manifest, Placement placement, int rank, LocalPartitions local,
                           RemoteFetcher fetcher, Path partsDir, LocalCapacity capacity, ReaderDemand demand,
                           Duration timeout, Path shmDir, boolean verbose) {
        this.placement = placement;
        this.rank = rank;
        this.local = local;
        this.fetcher = fetcher;
        this.partsDir = partsDir;
        this.capacity = capacity;
        this.demand = demand;
        this.timeout = timeout;
        this.shmDir = shmDir;
        this.verbose = verbose;
        int size = placement.size();
        this.order = new ArrayList<>();
        for (PartitionInfo p : manifest.regularPartitions()) {
            if (!placement.holds(rank, p.index())) {
                order.add(p);
            }
        }
        order.sort(Comparator.comparingInt((PartitionInfo p) -> Math.floorMod(placement.owner(p.index()) - rank - 1,
                size)).thenComparingInt(PartitionInfo::index));
        AtomicInteger n = new AtomicInteger();
        this.chunks = Executors.newFixedThreadPool(IN_FLIGHT, r -> {
            Thread t = new Thread(r, "fanstore-pull-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.thread = new Thread(this::run, "fanstore-pull");
        this.thread.setDaemon(true);
    }

    /** Partitions other ranks hold, which this rank means to pull (capacity permitting). */
    public int plannedPartitions() {
        return order.size();
    }

    public long plannedBytes() {
        return order.stream().mapToLong(PartitionInfo::bytes).sum();
    }

    /** Partitions pulled, checked and published so far. */
    public int pulledPartitions() {
        return pulledPartitions;
    }

    public long pulledBytes() {
        return pulledBytes;
    }

    public void start() {
        thread.start();
    }

    private void run() {
        long started = System.nanoTime();
        Map<Integer, PartitionInfo> left = new LinkedHashMap<>();
        for (PartitionInfo p : order) {
            left.put(p.index(), p);
        }
        int kept = 0;
        long bytes = 0;
        try {
            FileStore store = Files.getFileStore(partsDir);
            while (!stopping && !left.isEmpty()) {
                PartitionInfo next = pick(left);
                if (next.bytes() > capacity.remaining(store, bytes)) {
                    continue;
                }
                try {
                    pull(next);
                    kept++;
                    bytes += next.bytes();
                    pulledPartitions = kept;
                    pulledBytes = bytes;
                } catch (IOException e) {
                    if (!stopping) {
                        System.err.println("fanstore rank " + rank + ": prefetch of " + next.fileName()
                                + " abandoned: " + e.getMessage() + "; its files are fetched on demand");
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("fanstore rank " + rank + ": prefetch stopped: " + e.getMessage()
                    + "; files are fetched on demand");
        }
        if (!stopping) {
            report(kept, bytes, (System.nanoTime() - started) / 1e9);
        }
    }

    /** The oldest partition a reader missed on that is still to pull, else the next in order. */
    private PartitionInfo pick(Map<Integer, PartitionInfo> left) {
        for (int p = demand.nextMissed(); p >= 0; p = demand.nextMissed()) {
            PartitionInfo missed = left.remove(p);
            if (missed != null) {
                return missed;
            }
        }
        Integer first = left.keySet().iterator().next();
        return left.remove(first);
    }

    private void pull(PartitionInfo info) throws IOException {
        Path tmp = partsDir.resolve(".pull-" + info.fileName());
        Path target = partsDir.resolve(info.fileName());
        boolean published = false;
        try {
            try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                copy(info, out);
                check(info, out);
            }
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
            published = true;
            local.add(info.index(), target);
            IntConsumer added = whenAdded;
            if (added != null) {
                added.accept(info.index());   // its files become slices (docs/slices.md)
            }
        } finally {
            if (!published) {
                Files.deleteIfExists(tmp);
            }
        }
    }

    /** Fetches every range of the partition into out, at most IN_FLIGHT (1 while readers fetch) at once. */
    private void copy(PartitionInfo info, FileChannel out) throws IOException {
        ExecutorCompletionService<Void> done = new ExecutorCompletionService<>(chunks);
        long next = 0;
        int inFlight = 0;
        IOException failure = null;
        long lastStart = System.nanoTime();
        while (next < info.bytes() || inFlight > 0) {
            long now = System.nanoTime();
            int limit = limit(now, lastStart);
            boolean more = next < info.bytes() && failure == null && !stopping;
            if (more && inFlight < limit) {
                long position = next;
                long length = Math.min(CHUNK_BYTES, info.bytes() - position);
                done.submit(() -> fetchRange(info, out, position, length), null);
                next += length;
                inFlight++;
                lastStart = now;
                continue;
            }
            if (inFlight == 0) {
                if (!more) {
                    break;
                }
                pause();
                continue;
            }
            Future<Void> f = poll(done);
            if (f == null) {
                continue;
            }
            inFlight--;
            try {
                f.get();
            } catch (ExecutionException e) {
                if (failure == null) {
                    Throwable cause = e.getCause() instanceof PullFailure pf ? pf.getCause() : e.getCause();
                    failure = cause instanceof IOException io ? io : new IOException(cause);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (failure != null) {
            throw failure;
        }
        if (stopping) {
            throw new IOException("stopped at job end");
        }
    }

    /**
     * Ranges in flight allowed now: {@link #IN_FLIGHT}; none while readers fetch across the link (this rank's, or
     * a peer's asking this rank), except one once {@link #READERS_FIRST_NANOS} passed since the last range
     * started, so a pull under readers that never stop missing still moves (~50 MB/s, not for ever nothing).
     */
    private int limit(long now, long lastStart) {
        if (!demand.readersFetching(now, PEER_READERS_NANOS)) {
            return IN_FLIGHT;
        }
        return now - lastStart >= READERS_FIRST_NANOS ? 1 : 0;
    }

    /** Waits while readers fetch (the limit is 0), briefly, so their end is noticed soon. */
    private static void pause() {
        try {
            Thread.sleep(2);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits a little for a chunk, so a change in readers' demand is noticed between completions. */
    private static Future<Void> poll(ExecutorCompletionService<Void> done) {
        try {
            return done.poll(20, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private void fetchRange(PartitionInfo info, FileChannel out, long position, long length) {
        IOException last = null;
        for (int holder : placement.holders(info.index())) {
            if (holder == rank) {
                continue;
            }
            PositionalSink sink = new PositionalSink(out, position);
            try {
                fetcher.fetchRange(holder, LocalPartitions.partitionObject(info.index()), position, length, sink,
                        timeout);
            } catch (IOException e) {
                last = e;
                continue;
            }
            sink.rethrow();
            return;
        }
        throw new PullFailure(last != null ? last : new IOException("no other rank holds " + info.fileName()));
    }

    /** The manifest's length and whole-file CRC32C, read back from the written file. */
    private static void check(PartitionInfo info, FileChannel file) throws IOException {
        CRC32C crc = new CRC32C();
        ByteBuffer buf = ByteBuffer.allocateDirect(CHECK_BUFFER);
        long at = 0;
        for (int n; (n = file.read(buf, at)) > 0; at += n) {
            buf.flip();
            crc.update(buf);
            buf.clear();
        }
        if (at != info.bytes() || (int) crc.getValue() != info.crc32c()) {
            throw new IOException(String.format("pulled %d bytes with CRC32C %08x, the manifest says %d bytes"
                    + " with %08x", at, (int) crc.getValue(), info.bytes(), info.crc32c()));
        }
    }

    private void report(int kept, long bytes, double seconds) {
        double mib = bytes / (double) (1 << 20);
        double mibps = seconds > 0 ? mib / seconds : 0;
        if (kept == order.size()) {
            remoteBeforeAllLocal = demand.remoteFetches();
            localBeforeAllLocal = demand.localDecodes();
            allLocal = true;
        }
        if (verbose) {
            System.err.print((allLocal
                    ? String.format("fanstore rank %d: all partitions local after %.1f s (%.0f MiB, %.0f MiB/s)",
                            rank, seconds, mib, mibps)
                    : String.format("fanstore rank %d: prefetch kept %d of %d remote partitions in %.1f s (%.0f MiB,"
                            + " %.0f MiB/s); the rest are fetched on demand",
                            rank, kept, order.size(), seconds, mib, mibps)) + System.lineSeparator());
        }
        try {
            Path tmp = shmDir.resolve(MARKER + ".tmp");
            Files.writeString(tmp, String.format("partitions=%d of=%d bytes=%d seconds=%.3f%n", kept, order.size(),
                    bytes, seconds), StandardCharsets.US_ASCII);
            Files.move(tmp, shmDir.resolve(MARKER), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            System.err.println("fanstore rank " + rank + ": cannot write " + shmDir.resolve(MARKER) + ": "
                    + e.getMessage());
        }
    }

    /**
     * Stops pulling (a partition in progress is abandoned once its chunks in flight land). Called before the
     * job-end barrier, while every peer still serves, so this waits milliseconds, not a fetch timeout.
     */
    @Override
    public void close() {
        if (stopping) {
            return;
        }
        stopping = true;
        try {
            thread.join(timeout.toMillis() + 1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();  // shutting down anyway: let the caller see the interrupt
        }
        chunks.shutdownNow();
        if (verbose && allLocal) {
            System.err.print(String.format("fanstore rank %d: after all partitions were local: %d opens decoded"
                            + " locally, %d fetched remotely%n", rank, demand.localDecodes() - localBeforeAllLocal,
                    demand.remoteFetches() - remoteBeforeAllLocal));
        }
    }

    /** A chunk's failure, carried out of the pool to {@link #copy}. */
    private static final class PullFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        PullFailure(IOException cause) {
            super(cause.getMessage(), cause);
        }
    }

    /**
     * Writes a range at its place in the file. A write that fails (ENOSPC) is remembered and the rest of the
     * reply is drained, not refused: throwing mid-reply would leave the holder's worker blocked on a send no
     * one receives until its timeout, delaying readers on every rank it serves.
     */
    private static final class PositionalSink implements WritableByteChannel {
        private final FileChannel out;
        private long at;
        private IOException failure;

        PositionalSink(FileChannel out, long position) {
            this.out = out;
            this.at = position;
        }

        @Override
        public int write(ByteBuffer src) {
            int n = src.remaining();
            try {
                while (failure == null && src.hasRemaining()) {
                    at += out.write(src, at);
                }
            } catch (IOException e) {
                failure = e;
            }
            src.position(src.limit());
            return n;
        }

        void rethrow() {
            if (failure != null) {
                throw new PullFailure(failure);
            }
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
        }
    }
}
