package org.fanstore.runtime.fill;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.function.IntPredicate;
import java.util.function.ObjLongConsumer;
import org.fanstore.runtime.fetch.FetchSource;
import org.fanstore.runtime.fill.source.RangeSource;
import org.fanstore.runtime.placement.BodyCheck;
import org.fanstore.runtime.placement.BodyIndex;
import org.fanstore.runtime.placement.LocalPartitions;
import org.fanstore.runtime.stats.RankStats;
import org.fanstore.runtime.timing.Timing;
import org.fanstore.runtime.world.MpiWorld;

/**
 * The fill path's facade (README.md): runs the {@link FillScheduler}'s transfers from the {@link RangeSource}s into
 * each kept partition's {@link FillFile}, publishes a partition once every range landed and its whole-file CRC32C
 * (summed as the ranges landed) matches the manifest, and lets readers wait for the bytes they need ({@link
 * #whenBytes}, no thread held) or read a partition this node does not keep straight from its sources ({@link
 * #stream}).
 *
 * <p>By concern: this class holds the sources and the capacity; {@link FillDriver} the threads (driver, transfers,
 * publish); {@link FillFiles} the files' lifecycle; {@link ReaderWaits} the readers' waits. The scheduler, the waits
 * and the files' slice bookkeeping are guarded by {@link #lock}. Every time is on the governor's clock ({@link
 * Governor#now}), so a test can move it.
 */
public final class Fill implements LocalPartitions.Partial, RankStats.Gauges, AutoCloseable {
    /**
     * Ranges just under MPJ's protocol switch limit, so every peer reply goes eagerly: multi-MiB ranges (rendezvous
     * sends) between two ranks pulling from each other can deadlock niodev (threads parked in NIODevice.isend).
     */
    public static final int RANGE_BYTES = MpiWorld.DEFAULT_PROTOCOL_SWITCH_LIMIT - 4096;
    /**
     * Four ranges ahead of an in-order reader of small files ({@code -Dfanstore.fill.readahead=N}: for the A/B in
     * docs/decisions/read-ahead.md, not a user knob); a peer's "not held" retried (Timing, "fill").
     */
    public static final FillScheduler.Config SCHEDULE = new FillScheduler.Config(RANGE_BYTES,
            Integer.getInteger("fanstore.fill.readahead", 4), Timing.FILL_NOT_HELD_RETRY_NANOS,
            Timing.FILL_NOT_HELD_RETRIES);
    /** A read with no deadline of a reader's: the source's own bounds (as prep/store's ObjectStore.NO_DEADLINE). */
    public static final long NO_DEADLINE = Long.MAX_VALUE;
    private static final String[] KINDS = {"peer", "sharedfs", "objectstore"};

    private final KeepPlan plan;
    private final Governor governor;
    final FillScheduler scheduler;
    private final Map<Integer, RangeSource> sources;
    final LocalPartitions local;
    final int rank;
    final boolean verbose;
    private final long capacity;
    /** Kept partitions whose only source is the home (this rank's own and broadcast ones). */
    private final Set<Integer> stagedIn = new HashSet<>();
    final Object lock = new Object();
    final FillFiles files;
    private final FillDriver driver;
    private final Map<String, LongAdder> bytesFrom = new HashMap<>();
    volatile boolean stopping;
    volatile IntConsumer whenAdded = p -> { };
    private long reserved;
    /** The home's mark-down (README.md, "A silent home"), under {@link #lock}. */
    final HomeOutage outage = new HomeOutage(Timing.HOME_DOWN.toNanos());
    private final HomeWatch homeWatch = new HomeWatch(this);
    /** Readers waiting for ranges (README.md, "A reader's wait holds no thread"), under {@link #lock}. */
    final ReaderWaits waits = new ReaderWaits(this);

    /**
     * @param sources by source id: {@link FillScheduler#HOME}, and every peer rank
     * @param capacity the --local-capacity bytes the plan was made with (extras such as decoded copies come out of
     *                 what the plan leaves)
     * @param doneMarker written when the fill has ended (partitions kept of planned, bytes, seconds): scripts and
     *                   tests wait for it (runtime/layout/README.md, "prefetched")
     */
    public Fill(KeepPlan plan, Governor governor, Map<Integer, RangeSource> sources, LocalPartitions local,
                Path partsDir, BodyIndex bodies, BodyCheck check, long capacity, int rank, boolean verbose,
                Path doneMarker) {
        this.plan = plan;
        this.governor = governor;
        this.scheduler = new FillScheduler(SCHEDULE, governor, plan.kept(), id -> shape(sources.get(id)));
        scheduler.outage(outage);
        this.sources = sources;
        this.local = local;
        this.capacity = capacity;
        this.rank = rank;
        this.verbose = verbose;
        for (String k : KINDS) {
            bytesFrom.put(k, new LongAdder());
        }
        Set<Integer> ids = new HashSet<>();
        plan.kept().forEach(p -> ids.add(p.id()));
        for (FillScheduler.Part p : plan.kept()) {
            if (p.sources().length == 1 && p.sources()[0] == FillScheduler.HOME) {
                stagedIn.add(p.id());
            }
        }
        this.files = new FillFiles(this, partsDir, bodies, check, ids);
        this.driver = new FillDriver(this, doneMarker);
    }

    /**
     * How the scheduler shapes background transfers from source s (README.md, "Transfers by source"): its preferred
     * transfer in whole ranges (at least one), and its own in-flight bound if it has one.
     */
    static FillScheduler.Shape shape(RangeSource s) {
        if (s == null) {
            return FillScheduler.Shape.ONE_RANGE;
        }
        long ranges = Math.max(1, s.preferredTransferBytes() / RANGE_BYTES);
        return new FillScheduler.Shape((int) Math.min(ranges, Integer.MAX_VALUE), s.backgroundInFlight());
    }

    /** Called on the publish thread with each partition id just made a complete local copy. */
    public void whenAdded(IntConsumer listener) {
        this.whenAdded = listener;
    }

    public void start() {
        driver.start();
    }

    public Governor governor() {
        return governor;
    }

    public KeepPlan plan() {
        return plan;
    }

    /** Bytes moved from a source kind ("peer", "sharedfs", "objectstore"), into kept copies or streamed to readers.
     */
    public long bytesFrom(String kind) {
        LongAdder a = bytesFrom.get(kind);
        return a == null ? 0 : a.sum();
    }

    /** Bytes of kept partitions complete and published so far. */
    public long completedBytes() {
        return driver.completedBytes();
    }

    public int completedPartitions() {
        return driver.completed();
    }

    /** Nanoseconds from the start to the last kept partition's publication, or 0 while the fill runs. */
    public long finishedNanos() {
        return driver.finishedNanos();
    }

    /**
     * Reads bytes [position, position + length) of partition p from one source into sink, counting them by source.
     * A source that is lost or stalled is marked down for every later transfer (the home: for a while, README.md "A
     * silent home").
     */
    public void read(int source, int p, long position, long length, WritableByteChannel sink, boolean forReader)
            throws IOException {
        read(source, p, position, length, sink, forReader, NO_DEADLINE);
    }

    private void read(int source, int p, long position, long length, WritableByteChannel sink, boolean forReader,
            long deadline) throws IOException {
        RangeSource s = sources.get(source);
        if (s == null) {
            throw new RangeSource.SourceDownException("no source " + source + " in this job", null);
        }
        boolean home = source == FillScheduler.HOME;
        if (home) {
            homeWatch.admit(s, deadline != NO_DEADLINE);
        }
        try {
            if (deadline == NO_DEADLINE) {
                s.read(p, position, length, sink, forReader);
            } else {
                s.read(p, position, length, sink, deadline);
            }
        } catch (RangeSource.SourceDownException e) {
            if (home) {
                throw homeWatch.silent(s, e);
            }
            synchronized (lock) {
                scheduler.down(source);
            }
            throw e;
        } catch (IOException | RuntimeException e) {
            if (home) {
                homeWatch.answered(s);   // an answer all the same (an error, or bytes too slow): not silent
            }
            throw e;
        }
        if (home) {
            homeWatch.answered(s);
        }
        bytesFrom.get(s.kind()).add(length);
    }

    /**
     * Peers this rank no longer asks (it left the world after a node was lost: liveness/README.md): every range they
     * would have served comes from the next source, the home, and the plan's kept partitions still complete.
     */
    public void peersDown(int[] ranks) {
        synchronized (lock) {
            for (int r : ranks) {
                scheduler.down(r);
            }
            lock.notifyAll();
        }
    }

    /**
     * The sources, in order and without those marked down, that a reader of partition p not kept here (or not
     * served in time) reads from.
     */
    public int[] readSources(int p) {
        synchronized (lock) {
            return scheduler.sources(p, plan.streamedSources(p));
        }
    }

    @Override
    public long length(int p) {
        synchronized (lock) {
            return scheduler.keeps(p) ? plan.info(p).bytes() : FetchSource.NOT_HELD;
        }
    }

    @Override
    public FileChannel landed(int p, long position, long length) {
        synchronized (lock) {
            FillFile f = files.get(p);
            return f != null && scheduler.covers(p, position, length) ? f.channel : null;
        }
    }

    /**
     * A reader's read of bytes of p straight from one source, outside the fill's own transfers (a partition not kept
     * here, or not in time), given up at {@code deadline} (System.nanoTime(): the reader's open's bound; a source
     * that can abort its request there does, README.md "A silent home"): the scheduler counts it as a reader's
     * transfer from that source while it runs, so no background transfer starts from there meanwhile (README.md,
     * "The scheduler").
     */
    public void stream(int source, int p, long position, long length, WritableByteChannel sink, long deadline)
            throws IOException {
        synchronized (lock) {
            scheduler.streamBegins(source);
        }
        try {
            read(source, p, position, length, sink, true, deadline);
        } finally {
            synchronized (lock) {
                scheduler.streamEnds(source);
                lock.notifyAll();
            }
        }
    }

    /** Where kept partition p's complete copy is, or will be once filled; null when p is not kept. */
    public Path copyPath(int p) {
        synchronized (lock) {
            return scheduler.keeps(p) ? files.target(p) : null;
        }
    }

    /**
     * A peer's reader asks for bytes of p: when p is one this node stages in from the home alone, they are this node's
     * reader asks (first in its order) and the peer waits for them here, bounded, so the home is read once for both
     * nodes (README.md, "Giving way to readers").
     */
    @Override
    public FileChannel landedForReader(int p, long position, long length, long deadline) {
        FileChannel c = landed(p, position, length);
        if (c != null || !stagedIn(p)) {
            return c;
        }
        c = awaitBytes(p, position, length, deadline);
        return c != null && (local.holds(p) || landed(p, position, length) != null) ? c : null;
    }

    /**
     * Whether p is one this node brings in from the home alone (its own or a broadcast partition): waiting for it on
     * a peer's behalf never waits on another peer, so no two ranks wait on each other.
     */
    private boolean stagedIn(int p) {
        return stagedIn.contains(p);
    }

    /** Whether partition p is kept and being filled here (not complete yet, not abandoned). */
    public boolean filling(int p) {
        synchronized (lock) {
            return scheduler.keeps(p) && !local.holds(p);
        }
    }

    /**
     * Answers {@code then} with the channel from which bytes [offset, offset + length) of kept partition p can be
     * read: the local copy once it is one, else its fill file once those ranges landed; ranges not landed yet are
     * started first. Null when p is not kept (or no longer), the home they need is marked down, the fill stops, or
     * {@code deadline} ({@link Governor#now()}) passed: the caller then reads from the sources ({@link #stream}).
     * No thread waits (README.md, "A reader's wait holds no thread"): {@code then} runs on this thread when the
     * answer is known now, else on the fill's driver thread, so it must only hand the rest of its work off. The
     * caller checks each body's CRC32C, so nothing read here is trusted blindly.
     */
    public void whenBytes(int p, long offset, long length, long deadline, Consumer<FileChannel> then) {
        waits.add(p, offset, length, deadline, then);
    }

    /**
     * {@link #whenBytes} for a caller that waits on its own thread (a fetch worker serving a peer's reader): the
     * answer, or null at the deadline. The driver answers at the deadline; the get's own bound is only a backstop.
     */
    private FileChannel awaitBytes(int p, long offset, long length, long deadline) {
        CompletableFuture<FileChannel> answer = new CompletableFuture<>();
        whenBytes(p, offset, length, deadline, answer::complete);
        try {
            long backstop = Math.max(0, deadline - governor.now()) + Timing.FILL_DRIVER_IDLE_MILLIS * 1_000_000;
            return answer.get(backstop, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (ExecutionException | TimeoutException e) {
            return null;
        }
    }

    /**
     * A path a slice of bytes [offset, offset + length) of p may name for the rest of the job, or null: the local copy
     * once there is one, else the fill file while those bytes landed in it (then kept under that name even if the
     * partition is abandoned later). The caller checked the entry's CRC32C on those bytes.
     */
    public Path sliceablePath(int p, long offset, long length) {
        synchronized (lock) {
            if (local.holds(p)) {
                return local.file(p);
            }
            FillFile f = files.get(p);
            if (f == null || f.closed || !scheduler.covers(p, offset, length)) {
                return null;
            }
            f.sliced = true;
            f.keep(offset, length);
            return f.tmp;
        }
    }

    /** {@link #landedCrc}'s answer when the CRC32C is not known from the landing. */
    public static final long CRC_UNKNOWN = LandedCrcs.UNKNOWN;

    /** The CRC32C of bytes [offset, offset + length) of p read from {@code in}: as they landed, or read back. */
    public int bodyCrc(int p, FileChannel in, long offset, long length) throws IOException {
        long landed = landedCrc(p, in, offset, length);
        return landed != CRC_UNKNOWN ? (int) landed : BodyCheck.crc32c(in, offset, length);
    }

    /**
     * The CRC32C of bytes [offset, offset + length) of p in its fill file {@code in}, summed as they landed: no read
     * of the file. {@link #CRC_UNKNOWN} when {@code in} is not p's fill file or a piece of them is not summed.
     */
    public long landedCrc(int p, FileChannel in, long offset, long length) {
        LandedCrcs crcs = null;
        synchronized (lock) {
            FillFile f = files.get(p);
            if (f != null && f.channel == in) {
                crcs = f.crcs;
            }
        }
        return crcs != null ? crcs.crcOf(offset, length) : LandedCrcs.UNKNOWN;
    }

    /**
     * Waits until every kept partition accepted by {@code which} is complete or abandoned, at most until deadline
     * ({@link Governor#now()}); false if it was not.
     */
    public boolean awaitComplete(IntPredicate which, long deadline) throws InterruptedException {
        synchronized (lock) {
            while (true) {
                boolean all = true;
                for (FillScheduler.Part part : plan.kept()) {
                    int p = part.id();
                    if (which.test(p) && scheduler.keeps(p) && !local.holds(p)) {
                        all = false;
                        break;
                    }
                }
                if (all || stopping) {
                    return all;
                }
                long wait = deadline - governor.now();
                if (wait <= 0) {
                    return false;
                }
                lock.wait(Math.max(1, Math.min(Timing.FILL_COMPLETE_POLL_MILLIS, wait / 1_000_000)));
            }
        }
    }

    /**
     * Takes {@code bytes} of the capacity for something a kept partition brings along (its decoded copy), only out
     * of what the plan leaves free: such extras never displace a kept partition.
     */
    public boolean reserve(long bytes) {
        synchronized (lock) {
            if (plan.keptBytes() + reserved + bytes > capacity) {
                return false;
            }
            reserved += bytes;
            return true;
        }
    }

    /** Gives back {@code bytes} a {@link #reserve} granted for something then not made. */
    public void unreserve(long bytes) {
        synchronized (lock) {
            reserved -= bytes;
        }
    }

    /**
     * Stops the fill: nothing new starts, transfers in flight end (each bounded by its source's deadline), files
     * not complete are removed (or kept where slices read them). Called before the job-end barrier, while peers
     * still serve.
     */
    @Override
    public void close() {
        if (stopping) {
            return;
        }
        stopping = true;
        synchronized (lock) {
            lock.notifyAll();
        }
        driver.stop();
        files.closeAll();
        if (verbose) {
            System.err.printf("fanstore rank %d: fill at the end: %d of %d kept partitions local; %.0f MiB from"
                    + " peers, %.0f MiB from the home; governor: %d background starts, %d held back%n", rank,
                    completedPartitions(), plan.kept().size(), bytesFrom("peer") / 1048576.0,
                    (bytesFrom("sharedfs") + bytesFrom("objectstore")) / 1048576.0, governor.backgroundStarts(),
                    governor.backgroundHeld());
        }
    }

    /** The fill's fields of a statistics line. */
    @Override
    public void report(ObjLongConsumer<String> field) {
        field.accept("bytes_from_peer", bytesFrom("peer"));
        field.accept("bytes_from_sharedfs", bytesFrom("sharedfs"));
        field.accept("fill_partitions_planned", plan().kept().size());
        field.accept("fill_partitions_local", completedPartitions());
        field.accept("fill_bytes_planned", plan().keptBytes());
        field.accept("fill_bytes_local", completedBytes());
        field.accept("fill_ms", finishedNanos() / 1_000_000);
        Governor g = governor();
        field.accept("governor_background_starts", g.backgroundStarts());
        field.accept("governor_background_held", g.backgroundHeld());
        field.accept("governor_foreground_starts", g.foregroundStarts());
        field.accept("governor_foreground_held", g.foregroundHeld());
        synchronized (lock) {
            outage.report(field, governor.now());
        }
    }
}
