package org.fanstore.runtime.fill;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;
import java.util.function.ObjLongConsumer;
import org.fanstore.runtime.fill.source.RangeSource;
import org.fanstore.runtime.world.MpiWorld;
import org.fanstore.runtime.placement.BodyCheck;
import org.fanstore.runtime.placement.BodyIndex;
import org.fanstore.runtime.placement.LocalPartitions;
import org.fanstore.runtime.fetch.FetchSource;
import org.fanstore.runtime.stats.RankStats;

/**
 * The fill path's facade (README.md): runs the {@link FillScheduler}'s transfers from the {@link RangeSource}s into
 * each kept partition's {@link FillFile}, publishes a partition once every range landed and its whole-file CRC32C
 * (summed as the ranges landed) matches the manifest, and lets readers wait for the bytes they need ({@link
 * #awaitBytes}) or read a partition this node does not keep straight from its sources ({@link #read}).
 *
 * <p>Threads: one driver ({@code fanstore-fill}) asks the scheduler what to start whenever something happened;
 * transfers run on {@code fanstore-fill-transfer-N} (as many as the scheduler and governor allow in flight);
 * completed partitions are checked and published on {@code fanstore-fill-publish}. The scheduler, the files' slice
 * bookkeeping and the landings queue are guarded by {@link #lock}; readers wait on it for their ranges.
 */
public final class Fill implements LocalPartitions.Partial, RankStats.Gauges, AutoCloseable {
    /**
     * Ranges just under MPJ's protocol switch limit, so every peer reply goes eagerly: multi-MiB ranges (rendezvous
     * sends) between two ranks pulling from each other can deadlock niodev (threads parked in NIODevice.isend).
     */
    public static final int RANGE_BYTES = MpiWorld.DEFAULT_PROTOCOL_SWITCH_LIMIT - 4096;
    /**
     * Four ranges ahead of an in-order reader of small files; a peer's "not held" retried after 50 ms, 100 times
     * (5 s) before the range goes to the next source.
     */
    public static final FillScheduler.Config SCHEDULE = new FillScheduler.Config(RANGE_BYTES, 4, 50_000_000L, 100);
    /** What an abandoned fill file keeps around each slice read from it: whole pages. */
    private static final long PAGE = 4096;
    private static final String[] KINDS = {"peer", "sharedfs"};

    private final KeepPlan plan;
    private final Governor governor;
    private final FillScheduler scheduler;
    private final Map<Integer, RangeSource> sources;
    private final LocalPartitions local;
    private final Path partsDir;
    private final BodyIndex bodies;
    private final BodyCheck check;
    private final int rank;
    private final boolean verbose;
    private final Path doneMarker;
    private final long capacity;
    private final Map<Integer, int[]> entriesOf;
    /** Kept partitions whose only source is the shared FS (this rank's own and broadcast ones). */
    private final Set<Integer> stagedIn = new HashSet<>();
    private final Object lock = new Object();
    private final Map<Integer, FillFile> files = new HashMap<>();
    private final ArrayDeque<Landing> landings = new ArrayDeque<>();
    private final Set<Integer> publishing = new HashSet<>();
    private final Set<Integer> warnedDown = ConcurrentHashMap.newKeySet();
    private final ExecutorService transfers;
    private final ExecutorService publisher;
    private final Thread driver;
    private final Map<String, LongAdder> bytesFrom = new HashMap<>();
    private final long started = System.nanoTime();
    private volatile boolean stopping;
    private volatile IntConsumer whenAdded = p -> { };
    private volatile long completedBytes;
    private volatile int completed;
    private volatile long finishedNanos;
    private long reserved;

    /**
     * @param sources by source id: {@link FillScheduler#SHARED_FS}, and every peer rank
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
        this.scheduler = new FillScheduler(SCHEDULE, governor, plan.kept());
        this.sources = sources;
        this.local = local;
        this.partsDir = partsDir;
        this.bodies = bodies;
        this.check = check;
        this.capacity = capacity;
        this.rank = rank;
        this.verbose = verbose;
        this.doneMarker = doneMarker;
        for (String k : KINDS) {
            bytesFrom.put(k, new LongAdder());
        }
        Set<Integer> ids = new HashSet<>();
        plan.kept().forEach(p -> ids.add(p.id()));
        for (FillScheduler.Part p : plan.kept()) {
            if (p.sources().length == 1 && p.sources()[0] == FillScheduler.SHARED_FS) {
                stagedIn.add(p.id());
            }
        }
        this.entriesOf = entriesOf(bodies, ids);
        AtomicInteger n = new AtomicInteger();
        this.transfers = Executors.newCachedThreadPool(r -> daemon(r, "fanstore-fill-transfer-" + n.incrementAndGet()));
        this.publisher = Executors.newSingleThreadExecutor(r -> daemon(r, "fanstore-fill-publish"));
        this.driver = daemon(this::drive, "fanstore-fill");
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
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

    /** Bytes moved from a source kind ("peer", "sharedfs"), into kept copies or streamed to readers. */
    public long bytesFrom(String kind) {
        LongAdder a = bytesFrom.get(kind);
        return a == null ? 0 : a.sum();
    }

    /** Bytes of kept partitions complete and published so far. */
    public long completedBytes() {
        return completedBytes;
    }

    public int completedPartitions() {
        return completed;
    }

    /** Nanoseconds from the start to the last kept partition's publication, or 0 while the fill runs. */
    public long finishedNanos() {
        return finishedNanos;
    }

    private void drive() {
        List<FillFile> toPublish = new ArrayList<>();
        List<FillFile> toDrop = new ArrayList<>();
        List<FillScheduler.Transfer> toStart = new ArrayList<>();
        try {
            while (!stopping) {
                synchronized (lock) {
                    long now = governor.now();
                    takeLandings(now, toPublish, toDrop);
                    toStart.addAll(scheduler.next(now));
                    if (toStart.isEmpty() && toPublish.isEmpty() && toDrop.isEmpty()) {
                        if (scheduler.finished() && publishing.isEmpty()) {
                            break;
                        }
                        long wake = scheduler.wakeAt(now);
                        long ms = wake == Long.MAX_VALUE ? 1000 : Math.max(1, (wake - now) / 1_000_000);
                        lock.wait(Math.min(1000, ms));
                        continue;
                    }
                }
                toStart.forEach(this::run);
                toStart.clear();
                for (FillFile f : toPublish) {
                    publisher.execute(() -> publish(f));
                }
                toPublish.clear();
                toDrop.forEach(f -> drop(f, "its local file cannot take more bytes"));
                toDrop.clear();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            System.err.println("fanstore rank " + rank + ": the fill stopped: " + e.getMessage()
                    + "; files are read from their sources on each open");
        }
        finishedNanos = System.nanoTime() - started;
        if (!stopping) {
            writeMarker();
        }
        if (verbose && !stopping) {
            System.err.printf("fanstore rank %d: fill done in %.1f s: %d of %d kept partitions local (%.0f MiB);"
                    + " %.0f MiB from peers, %.0f MiB from the shared FS (landed ranges: %s)%n", rank,
                    finishedNanos / 1e9, completed, plan.kept().size(), completedBytes / 1048576.0,
                    bytesFrom("peer") / 1048576.0, bytesFrom("sharedfs") / 1048576.0, describeLocked());
        }
    }

    private String describeLocked() {
        synchronized (lock) {
            return scheduler.describe();
        }
    }

    private void writeMarker() {
        try {
            Path tmp = doneMarker.resolveSibling(doneMarker.getFileName() + ".tmp");
            String line = String.format("partitions=%d of=%d bytes=%d seconds=%.3f%n", completed, plan.kept().size(),
                    completedBytes, finishedNanos / 1e9);
            Files.writeString(tmp, line, java.nio.charset.StandardCharsets.US_ASCII);
            Files.move(tmp, doneMarker, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            System.err.println("fanstore rank " + rank + ": cannot write " + doneMarker + ": " + e.getMessage());
        }
    }

    /** Applies the landed and failed transfers to the scheduler (holding the lock). */
    private void takeLandings(long now, List<FillFile> toPublish, List<FillFile> toDrop) {
        for (Landing l; (l = landings.poll()) != null; ) {
            FillScheduler.Transfer t = l.transfer();
            int p = t.part();
            IOException e = l.failure();
            if (e == null) {
                scheduler.landed(t);
                if (scheduler.keeps(p) && scheduler.complete(p) && publishing.add(p)) {
                    toPublish.add(files.get(p));
                }
            } else if (l.localWrite()) {
                boolean kept = scheduler.keeps(p);
                scheduler.abandon(t);
                if (kept) {
                    System.err.println("fanstore rank " + rank + ": keeping partition " + plan.info(p).fileName()
                            + " stopped: " + e.getMessage() + "; its files are read from their sources instead");
                    toDrop.add(files.get(p));
                }
            } else {
                boolean down = e instanceof RangeSource.SourceDownException;
                if (down && warnedDown.add(t.source())) {
                    System.err.println("fanstore rank " + rank + ": " + e.getMessage() + "; reading from the next"
                            + " source instead");
                } else if (!down && !(e instanceof RangeSource.NotHeldException)) {
                    System.err.println("fanstore rank " + rank + ": " + e.getMessage() + "; trying the next source");
                }
                boolean left = e instanceof RangeSource.NotHeldException ? scheduler.notHeld(t, now)
                        : scheduler.failed(t, down);
                if (!left && files.get(p) != null) {
                    toDrop.add(files.get(p));
                }
            }
        }
        lock.notifyAll();
    }

    /** Starts one transfer on a transfer thread; its landing goes back to the driver. */
    private void run(FillScheduler.Transfer t) {
        FillFile f;
        try {
            f = file(t.part());
        } catch (IOException e) {
            land(new Landing(t, e, true));
            return;
        }
        long position = (long) t.range() * RANGE_BYTES;
        long length = Math.min((long) (t.range() + t.count()) * RANGE_BYTES, f.info.bytes()) - position;
        try {
            transfers.execute(() -> {
                PositionalSink sink = PositionalSink.draining(f.channel, f.tmp, position);
                try {
                    read(t.source(), t.part(), position, length, f.crcs.summing(sink, position), t.foreground());
                } catch (IOException e) {
                    land(new Landing(t, e, false));
                    return;
                } catch (RuntimeException e) {
                    land(new Landing(t, new IOException(e.getMessage(), e), false));
                    return;
                }
                try {
                    sink.rethrow();
                    land(new Landing(t, null, false));
                } catch (IOException e) {
                    land(new Landing(t, e, true));
                }
            });
        } catch (RejectedExecutionException stopped) {
            land(new Landing(t, new IOException("the job is ending"), false));
        }
    }

    private void land(Landing l) {
        synchronized (lock) {
            landings.add(l);
            lock.notifyAll();
        }
    }

    /** The partition's fill file, created on its first transfer. */
    private FillFile file(int p) throws IOException {
        synchronized (lock) {
            FillFile f = files.get(p);
            if (f != null) {
                return f;
            }
            var info = plan.info(p);
            Path tmp = partsDir.resolve(".fill-" + info.fileName());
            FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
            int[] entries = entriesOf.getOrDefault(p, new int[0]);
            f = new FillFile(info, p, tmp, out, entries, LandedCrcs.of(info, RANGE_BYTES, bodies, entries));
            files.put(p, f);
            return f;
        }
    }

    /**
     * Reads bytes [position, position + length) of partition p from one source into sink, counting them by source.
     * A source that is lost or stalled is marked down for every later transfer.
     */
    public void read(int source, int p, long position, long length, WritableByteChannel sink, boolean forReader)
            throws IOException {
        RangeSource s = sources.get(source);
        if (s == null) {
            throw new RangeSource.SourceDownException("no source " + source + " in this job", null);
        }
        try {
            s.read(p, position, length, sink, forReader);
        } catch (RangeSource.SourceDownException e) {
            synchronized (lock) {
                scheduler.down(source);
            }
            throw e;
        }
        bytesFrom.get(s.kind()).add(length);
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
     * Whether p is one this node brings in from the shared FS alone (its own or a broadcast partition): waiting for
     * it on a peer's behalf never waits on another peer, so no two ranks wait on each other.
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
     * The channel from which bytes [offset, offset + length) of kept partition p can be read: the local copy once
     * it is one, else its fill file once those ranges landed. A reader that needs ranges not landed yet has them
     * started first and waits for them until {@code deadline} ({@link System#nanoTime()}). Null when p is not kept
     * (or no longer), or the deadline passed: the caller then reads from the sources ({@link #read}). The caller
     * checks each body's CRC32C, so nothing read here is trusted blindly.
     */
    public FileChannel awaitBytes(int p, long offset, long length, long deadline) {
        boolean asked = false;
        synchronized (lock) {
            while (true) {
                if (local.holds(p)) {
                    return local.channel(p);
                }
                if (stopping || !scheduler.keeps(p)) {
                    return null;
                }
                if (!asked) {
                    asked = true;
                    scheduler.want(p, offset, length);
                    lock.notifyAll();
                }
                FillFile f = files.get(p);
                if (f != null && scheduler.covers(p, offset, length)) {
                    return f.channel;
                }
                long wait = deadline - System.nanoTime();
                if (wait <= 0) {
                    return null;
                }
                try {
                    lock.wait(Math.max(1, Math.min(20, wait / 1_000_000)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return null;
                }
            }
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

    /** The CRC32C of bytes [offset, offset + length) of p read from {@code in}: as they landed, or read back. */
    public int bodyCrc(int p, FileChannel in, long offset, long length) throws IOException {
        LandedCrcs crcs = null;
        synchronized (lock) {
            FillFile f = files.get(p);
            if (f != null && f.channel == in) {
                crcs = f.crcs;
            }
        }
        long landed = crcs != null ? crcs.crcOf(offset, length) : LandedCrcs.UNKNOWN;
        return landed != LandedCrcs.UNKNOWN ? (int) landed : BodyCheck.crc32c(in, offset, length);
    }

    /**
     * Waits until every kept partition accepted by {@code which} is complete or abandoned, at most until deadline
     * ({@link System#nanoTime()}); false if it was not.
     */
    public boolean awaitComplete(java.util.function.IntPredicate which, long deadline) throws InterruptedException {
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
                long wait = deadline - System.nanoTime();
                if (wait <= 0) {
                    return false;
                }
                lock.wait(Math.max(1, Math.min(100, wait / 1_000_000)));
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

    /** Checks the whole file, renames it into place and makes it a local partition (the publish thread). */
    private void publish(FillFile f) {
        Path target = partsDir.resolve(f.info.fileName());
        boolean added = false;
        try {
            long sum = f.crcs.whole();
            int crc = sum != LandedCrcs.UNKNOWN ? (int) sum : BodyCheck.crc32c(f.channel, 0, f.info.bytes());
            if (f.channel.size() != f.info.bytes() || crc != f.info.crc32c()) {
                throw new IOException(String.format("filled %d bytes with CRC32C %08x, the manifest says %d bytes"
                        + " with %08x", f.channel.size(), crc, f.info.bytes(), f.info.crc32c()));
            }
            boolean sliced;
            synchronized (lock) {
                sliced = f.sliced;
                f.closed = true;                 // no new slice of the fill file's name from here on
            }
            if (sliced) {
                Files.createLink(target, f.tmp); // a second name: slices published while it filled name f.tmp
            } else {
                Files.move(f.tmp, target, StandardCopyOption.ATOMIC_MOVE);
            }
            local.add(f.id, target);
            added = true;
            f.crcs.settle(bodies, f.entries, check);   // before its slices: publishing them reads no body back
            whenAdded.accept(f.id);
        } catch (IOException | RuntimeException e) {
            System.err.println("fanstore rank " + rank + ": partition " + f.info.fileName() + " could not be kept: "
                    + e.getMessage() + "; its files are read from their sources instead");
            if (!added) {
                synchronized (lock) {
                    scheduler.abandon(f.id);
                }
                drop(f, null);
            }
        } finally {
            synchronized (lock) {
                if (added) {
                    completed++;
                    completedBytes += f.info.bytes();
                }
                publishing.remove(f.id);
                lock.notifyAll();
            }
        }
    }

    /** An abandoned partition's file: removed, or (slices read it) its other bytes punched out. */
    private void drop(FillFile f, String why) {
        if (f == null) {
            return;
        }
        boolean keep;
        List<long[]> unread;
        synchronized (lock) {
            f.closed = true;
            keep = f.sliced;
            unread = keep ? f.unkeptPages(PAGE) : List.of();
        }
        if (keep) {
            try {
                long freed = PunchHoles.punch(f.tmp, unread);
                if (why != null && !stopping) {
                    System.err.println("fanstore rank " + rank + ": " + f.tmp.getFileName() + " stays until the job"
                            + " ends (files are read in place from it); its other " + freed + " bytes are freed");
                }
            } catch (IOException e) {
                // the file stays whole until the job's directory goes
            }
            return;
        }
        try {
            Files.deleteIfExists(f.tmp);   // a reader still reading it keeps its open channel
        } catch (IOException e) {
            System.err.println("fanstore rank " + rank + ": cannot remove " + f.tmp + ": " + e.getMessage());
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
        try {
            driver.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        transfers.shutdown();
        publisher.shutdown();
        try {
            transfers.awaitTermination(10, TimeUnit.SECONDS);
            publisher.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        transfers.shutdownNow();
        List<FillFile> all;
        synchronized (lock) {
            all = new ArrayList<>(files.values());
        }
        for (FillFile f : all) {
            if (!local.holds(f.id)) {
                drop(f, null);
            }
            try {
                f.channel.close();
            } catch (IOException e) {
                // the job is ending
            }
        }
        if (verbose) {
            System.err.printf("fanstore rank %d: fill at the end: %d of %d kept partitions local; %.0f MiB from"
                    + " peers, %.0f MiB from the shared FS; governor: %d background starts, %d held back%n", rank,
                    completed, plan.kept().size(), bytesFrom("peer") / 1048576.0, bytesFrom("sharedfs") / 1048576.0,
                    governor.backgroundStarts(), governor.backgroundHeld());
        }
    }

    /** The entries with a body in each of the partitions {@code ids}, in table order (one pass over the table). */
    private static Map<Integer, int[]> entriesOf(BodyIndex bodies, Set<Integer> ids) {
        Map<Integer, int[]> count = new HashMap<>();
        for (int i = 0; i < bodies.entries(); i++) {
            int p = bodies.partition(i);
            if (p != BodyIndex.NO_BODY && ids.contains(p)) {
                count.computeIfAbsent(p, k -> new int[1])[0]++;
            }
        }
        Map<Integer, int[]> out = new HashMap<>();
        count.forEach((p, c) -> out.put(p, new int[c[0]]));
        Map<Integer, int[]> at = new HashMap<>();
        for (int i = 0; i < bodies.entries(); i++) {
            int p = bodies.partition(i);
            int[] list = p == BodyIndex.NO_BODY ? null : out.get(p);
            if (list != null) {
                list[at.computeIfAbsent(p, k -> new int[1])[0]++] = i;
            }
        }
        return out;
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
    }

    /** A transfer that ended: landed (failure null), failed at its source, or failed writing locally. */
    private record Landing(FillScheduler.Transfer transfer, IOException failure, boolean localWrite) {
    }
}
