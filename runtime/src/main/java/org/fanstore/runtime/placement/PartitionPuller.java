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
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import java.util.zip.CRC32C;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.runtime.mpi.MpiWorld;
import org.fanstore.runtime.mpi.RemoteFetcher;
import org.fanstore.runtime.layout.RankDirectory;
import org.fanstore.runtime.shm.BackgroundFloor;
import org.fanstore.runtime.shm.BackgroundPriority;

/**
 * Makes remote files local: after ready, copies the regular partitions this node does not hold from their
 * holders (owner first, then replicas) into the local partition directory, in ranges of {@link #CHUNK_BYTES}
 * with up to {@link #IN_FLIGHT} in flight, so later opens of their files are decoded here instead of fetched
 * one by one (a cold remote open costs a round trip per file; a partition moves at the link's speed).
 *
 * <p>Invariants: a partition is written under {@code .pull-<name>}, checked against the manifest's
 * whole-file CRC32C (summed as its ranges land, {@link LandedCrcs}), and only then renamed and added to
 * {@link LocalPartitions}; a failed pull (a full disk, a holder gone) removes its temporary file and leaves that
 * partition fetched on demand, so prefetching never fails a read. Readers go first: while readers fetch across the
 * link, this rank's (an on-demand fetch running) or a peer's (that peer asked this rank for a file, or noted that its
 * readers fetch ({@link ReaderNotes}), in the last {@link #PEER_READERS_NANOS}), a new range starts at most every
 * {@link #READERS_FIRST_NANOS} (pausing altogether would starve the pull for as long as an epoch keeps missing,
 * i.e. for ever), or every {@link #PEERS_ONLY_FLOOR_NANOS} while only peers' readers need this node, and holders
 * serve readers' requests ahead of queued ranges (FetchDispatcher).
 * The peer's side is what pays: a reader's request and its reply share the one connection per pair with both
 * ranks' pull messages (508 KiB each), and the peer's pull of THIS rank's partitions is invisible to this rank's
 * demand alone. Pacing on local demand only (one range per 10 ms) showed no gain; with the peer's signal the
 * first pass gained 30-40% at 2 ranks and 2x at 4 (bench/RESULTS.md, "cold remote open: ring and wake-up
 * stages, readers first across the link"). The same floor holds while this node's readers are short of CPU
 * ({@link ReaderCpu}) and none of them read from the pull lately: a warm epoch reads at its own speed, not the pull's
 * (2 ranks, warm while pulls ran: 0.34x -> 1.20x native at 128 KiB; bench/RESULTS.md, "Background work gives way to
 * readers short of CPU").
 *
 * <p>Readers ride the pull ({@link #awaitBytes}): a reader's miss on a partition still to pull, or being pulled,
 * has the ranges holding its file pulled next (asked of the holder as a reader's request, served ahead of
 * background ranges), in several partitions at once, and reads the file from them once they landed. Before, each
 * miss fetched its file on its own and the pull gave way to those fetches; at 2 ranks, 128 KiB, the first pass
 * went from 0.31x to 0.57x of raw MPJ in one run (bench/RESULTS.md, "readers ride the pull"), and no byte crosses
 * the link twice. The pacing above still applies to the background order while whole-file fetches run (a
 * partition skipped for capacity, or --prefetch off on a peer).
 *
 * <p>Order: within the partitions readers read from, the range nearest after where they read ({@link
 * ReadAhead#behindReaders}: a first epoch reads every partition at once, so the pull keeps just ahead of all of
 * them); then a partition a reader just missed on (the epoch is reading it now); otherwise the
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
    static final long READERS_FIRST_NANOS = BackgroundFloor.INTERVAL_NANOS;
    /** A peer's reader request served this recently counts as readers fetching now. */
    static final long PEER_READERS_NANOS = 20_000_000L;
    /**
     * While only peers' readers need this node (its own read nothing for {@link #OWN_IDLE_NANOS}), the pull's
     * floor is this long instead of {@link #READERS_FIRST_NANOS} (~5 MB/s): its ranges would take the holders'
     * CPU and links from readers that wait now, for readers here that may not read for a while. With 4 ranks and
     * rank 0 alone reading, the three other pulls at the 10 ms floor took ~1/3 of the CPU of the cold pass.
     */
    static final long PEERS_ONLY_FLOOR_NANOS = 10 * BackgroundFloor.INTERVAL_NANOS;
    /** Own readers that read nothing this long (four {@link ReaderCpu} windows) are idle. */
    static final long OWN_IDLE_NANOS = 200_000_000L;
    /**
     * Readers that read from a partition being pulled this recently (or wait for one now) still need the pull: the
     * next files they open are in it, so it does not give way to them for lack of CPU ({@link ReaderCpu}). A few
     * times the gap between a first epoch's remote opens (~6 ms at 2 MiB, 2 threads); a warm epoch, which reads
     * nothing from the pull, then makes it yield within this long.
     */
    static final long RIDERS_RECENT_NANOS = 20_000_000L;
    /** Three of a holder's four fetch workers at most, so one stays free for readers' on-demand fetches. */
    static final int IN_FLIGHT = 3;
    /** Ranges pulled ahead of a reader that reads a partition front to back ({@link #readAhead}). */
    static final int READ_AHEAD = 4;
    private static final int CHECK_BUFFER = 1 << 20;
    /** What an abandoned pull file keeps around each slice read from it: whole pages (blocks). */
    private static final long PAGE = 4096;
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
    private final BodyIndex bodies;
    private final BodyCheck check;
    /** The entries with a body in each partition still to begin, by partition index; handed to its PullFile. */
    private final int[][] entriesOf;
    /** Background ranges, on threads at a lower CPU priority (BackgroundPriority); readers' ranges: readerChunks. */
    private final ExecutorService chunks;
    private final ExecutorService readerChunks;
    /**
     * Checks and publishes complete pull files (a whole-partition CRC, the rename, its slices): heavy and nobody
     * waits on it (riders read the pull file until then), so it runs at background priority and off the scheduler,
     * which meanwhile keeps starting riders' ranges.
     */
    private final ExecutorService publisher;
    private final Thread thread;
    private volatile boolean stopping;
    private volatile boolean allLocal;
    private volatile long remoteBeforeAllLocal;
    private volatile long localBeforeAllLocal;
    private volatile int pulledPartitions;
    private volatile long pulledBytes;
    private volatile IntConsumer whenAdded;
    /** Guards the fields below and the {@link PullFile}s; readers wait on it for their ranges. */
    private final Object lock = new Object();
    /** Remote partitions still to be pulled or being pulled: a reader may wait for these. */
    private final Set<Integer> planned = new HashSet<>();
    private final Map<Integer, PullFile> active = new LinkedHashMap<>();
    /** Byte ranges readers wait for: {partition, offset, length}, oldest first. */
    private final ArrayDeque<long[]> urgent = new ArrayDeque<>();
    private final ArrayDeque<Landing> landings = new ArrayDeque<>();
    /** Ranges to pull ahead of readers reading in order: {partition, range}, after {@link #urgent}. */
    private final ArrayDeque<int[]> ahead = new ArrayDeque<>();
    private final ReadAhead readAhead = new ReadAhead(READ_AHEAD);
    /** Every temporary file's channel, closed at {@link #close}: a reader may still read one that was renamed. */
    private final List<FileChannel> opened = new ArrayList<>();
    private int inFlight;
    /** When {@link #limit} last ran, and the time it spent on the peers-only floor (the scheduler thread's). */
    private long limitAt;
    private long peersOnlyNanos;
    /** When a reader last read from (or waited for) a partition being pulled ({@link System#nanoTime()}). */
    private long riderAt = Long.MIN_VALUE / 2;
    /** Readers inside {@link #awaitBytes} now. Both guarded by lock. */
    private int riding;
    private long reserved;
    /** Kept abandoned pull files a range landed in after they were punched: punched again (guarded by lock). */
    private final List<PullFile> punchAgain = new ArrayList<>();

    /** Called on the pulling thread with each partition id just added to the local copies. */
    public void whenAdded(IntConsumer listener) {
        this.whenAdded = listener;
    }

    public PartitionPuller(Manifest manifest, Placement placement, int rank, LocalPartitions local,
                           RemoteFetcher fetcher, Path partsDir, LocalCapacity capacity, ReaderDemand demand,
                           Duration timeout, Path shmDir, boolean verbose, BodyIndex bodies, BodyCheck check) {
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
        this.bodies = bodies;
        this.check = check;
        int size = placement.size();
        this.order = new ArrayList<>();
        for (PartitionInfo p : manifest.regularPartitions()) {
            if (!placement.holds(rank, p.index())) {
                order.add(p);
                planned.add(p.index());
            }
        }
        order.sort(Comparator.comparingInt((PartitionInfo p) -> Math.floorMod(placement.owner(p.index()) - rank - 1,
                size)).thenComparingInt(PartitionInfo::index));
        this.entriesOf = bodies.entriesByPartition(order.stream().mapToInt(PartitionInfo::index).toArray());
        this.chunks = Executors.newFixedThreadPool(IN_FLIGHT, BackgroundPriority.threads("fanstore-pull"));
        this.publisher = Executors.newSingleThreadExecutor(BackgroundPriority.threads("fanstore-pull-publish"));
        AtomicInteger u = new AtomicInteger();
        this.readerChunks = Executors.newFixedThreadPool(IN_FLIGHT, r -> {
            Thread t = new Thread(r, "fanstore-pull-reader-" + u.incrementAndGet());
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
        try {
            FileStore store = Files.getFileStore(partsDir);
            List<PullFile> complete = new ArrayList<>();
            List<Landing> failed = new ArrayList<>();
            List<PullFile> repunch = new ArrayList<>();
            long lastStart = 0;
            while (!stopping) {
                synchronized (lock) {
                    takeLandings(complete, failed);
                    long now = System.nanoTime();
                    int background = limit(now, lastStart);
                    while (inFlight < IN_FLIGHT && (startUrgent(store, left) || startAhead()
                            || inFlight < background && startBackground(store, left))) {
                        lastStart = now;
                    }
                    repunch.addAll(punchAgain);
                    punchAgain.clear();
                    if (complete.isEmpty() && failed.isEmpty() && repunch.isEmpty()) {
                        if (inFlight == 0 && active.isEmpty() && left.isEmpty()) {
                            break;
                        }
                        lock.wait(background == 0 ? 2 : 20);
                        continue;
                    }
                }
                for (Landing l : failed) {
                    abandon(l.file(), l.failure());
                }
                repunch.forEach(this::punchAgain);
                repunch.clear();
                for (PullFile f : complete) {
                    publisher.execute(() -> publish(f));   // f stays in active until published: the loop waits
                }
                complete.clear();
                failed.clear();
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("fanstore rank " + rank + ": prefetch stopped: " + e.getMessage()
                    + "; files are fetched on demand");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            discardUnfinished();
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        if (!stopping) {
            report(pulledPartitions, pulledBytes, seconds);
        } else if (verbose) {
            logCounters();
            System.err.println(String.format("fanstore rank %d: the job ended during the pull: %d of %d remote"
                    + " partitions local (%.0f MiB in %.1f s)", rank, pulledPartitions, order.size(),
                    pulledBytes / (double) (1 << 20), seconds));
        }
    }

    private void logCounters() {
        System.err.println(String.format("fanstore rank %d: during the pull %d reader opens rode it, %d fetched"
                + " their file on their own; background ranges gave way to readers short of CPU for %.2f s,"
                + " to peers' readers alone (this node's idle) for %.2f s",
                rank, demand.rodePullCount(), demand.remoteFetches(), demand.readersStarvedNanos() / 1e9,
                peersOnlyNanos / 1e9));
    }

    /**
     * At the end (stopping, or a failure): lets the ranges in flight land, so no chunk thread is left inside
     * MPJ (peers still serve before the job-end barrier: milliseconds), then removes unfinished temporary files.
     * Waiting readers fetch on demand from now on.
     */
    private void discardUnfinished() {
        List<PullFile> unfinished;
        List<PullFile> late;
        synchronized (lock) {
            planned.clear();
            lock.notifyAll();
            long until = System.nanoTime() + timeout.toNanos();
            List<PullFile> ignored = new ArrayList<>();
            while (inFlight > 0 && System.nanoTime() < until) {
                takeLandings(ignored, new ArrayList<>());
                if (inFlight > 0) {
                    try {
                        lock.wait(20);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
            }
            late = new ArrayList<>(punchAgain);    // kept files that ranges waited for above landed in
            punchAgain.clear();
            unfinished = new ArrayList<>(active.values());
            unfinished.addAll(ignored);
            active.clear();
            unfinished.forEach(f -> f.abandoned = true);
            unfinished.removeIf(f -> f.sliced);   // published slices read it until the job's directory goes
        }
        late.forEach(this::punchAgain);
        for (PullFile f : unfinished) {
            try {
                Files.deleteIfExists(f.tmp);
            } catch (IOException e) {
                System.err.println("fanstore rank " + rank + ": cannot remove " + f.tmp + ": " + e.getMessage());
            }
        }
    }

    /**
     * The channel from which bytes [offset, offset + length) of a partition this rank pulls can be read: the
     * local copy once it is one, else the pull's temporary file once the ranges holding them landed. A reader
     * that needs ranges not landed yet has them pulled next, ahead of the background order, and waits for them
     * until {@code deadline} ({@link System#nanoTime()}). Null when the partition is not (or no longer) being
     * pulled, or the deadline passed: then the reader fetches its file on demand. The caller checks each
     * body's CRC32C as usual, so what it reads here is never trusted blindly.
     */
    public FileChannel awaitBytes(int partition, long offset, long length, long deadline) {
        boolean asked = false;
        boolean marked = false;
        synchronized (lock) {
            riding++;
            demand.rideStarted();
            try {
                while (true) {
                    if (local.holds(partition)) {
                        return local.channel(partition);
                    }
                    if (stopping || !planned.contains(partition)) {
                        return null;
                    }
                    riderAt = System.nanoTime();       // a reader reads from the pull: it is not only background
                    PullFile f = active.get(partition);
                    if (f != null && !marked) {
                        marked = true;
                        if (length <= CHUNK_BYTES / 2) {
                            readAhead(f, f.rangeOf(offset));
                        } else {
                            readAhead.passed(partition, f.rangeOf(offset + length - 1));
                        }
                    }
                    if (f != null && f.covers(offset, length)) {
                        return f.channel;
                    }
                    if (!asked) {
                        urgent.add(new long[] {partition, offset, length});
                        asked = true;
                        lock.notifyAll();
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
            } finally {
                riding--;
                demand.rideEnded();
            }
        }
    }

    /**
     * A path a slice of bytes [offset, offset + length) of partition p may name for the rest of the job, or null:
     * the local copy once there is one, else the pull file while those bytes have landed in it (which is then
     * kept under that name, even if its pull is abandoned later). The caller has checked the entry's CRC32C on
     * those bytes (docs/slices.md, "riders").
     */
    public Path sliceablePath(int partition, long offset, long length) {
        synchronized (lock) {
            if (local.holds(partition)) {
                return local.file(partition);
            }
            PullFile f = active.get(partition);
            if (f == null || f.abandoned || !f.covers(offset, length)) {
                return null;
            }
            f.sliced = true;
            f.keep(offset, length);
            return f.tmp;
        }
    }

    /**
     * The CRC32C of bytes [offset, offset + length) of partition p, read from {@code pulled} (what {@link #awaitBytes}
     * returned): summed as its ranges landed while p is being pulled, read back otherwise.
     */
    public int bodyCrc(int partition, FileChannel pulled, long offset, long length) throws IOException {
        LandedCrcs crcs = null;
        synchronized (lock) {
            PullFile f = active.get(partition);
            if (f != null && f.channel == pulled) {
                crcs = f.crcs;
            }
        }
        // joined outside the lock (a few joins per piece): the pieces of ranges that landed are never written again
        long landed = crcs != null ? crcs.crcOf(offset, length) : LandedCrcs.UNKNOWN;
        return landed != LandedCrcs.UNKNOWN ? (int) landed : BodyCheck.crc32c(pulled, offset, length);
    }

    /** Moves landed ranges into their files; files now complete or failed go to the lists (holding the lock). */
    private void takeLandings(List<PullFile> complete, List<Landing> failed) {
        for (Landing l; (l = landings.poll()) != null; ) {
            inFlight--;
            PullFile f = l.file();
            if (active.get(f.info.index()) != f) {
                // its partition was abandoned while this range flew; a kept file got pages written back
                if (f.abandoned && f.sliced && !punchAgain.contains(f)) {
                    punchAgain.add(f);
                }
                continue;
            }
            if (l.failure() != null) {
                active.remove(f.info.index());
                failed.add(l);
                continue;
            }
            for (int i = 0; i < l.count(); i++) {
                f.landed(l.range() + i);
            }
            if (f.complete()) {
                complete.add(f);               // stays in active, readable, until publish() makes it local
            }
        }
    }

    /**
     * Readers that read small files (half a range or less) of partition f in file order ({@link ReadAhead}) have the
     * {@link #READ_AHEAD} ranges after this one pulled next, before the background order and without its pacing: in
     * a first epoch that reads in order, a reader's next files have landed by the time it opens them, instead of each
     * new range costing it a round trip (at 128 KiB a ride waited for one range every four files; 1.45x the first
     * pass at 2 and 4 ranks, bench/RESULTS.md). Reads in random order rarely look sequential, and a range pulled
     * ahead is pulled once either way: it only comes sooner. Larger files ask for several ranges each already, and a
     * reader that interleaves partitions (files in table order do: prep deals them out in turn) would not reach the
     * ranges ahead before its asks in other partitions, which then wait behind them: at 2 MiB it cost ~10%.
     */
    private void readAhead(PullFile f, int range) {
        int[] due = readAhead.read(f.info.index(), range, f.ranges());
        for (int r : due) {
            ahead.add(new int[] {f.info.index(), r});
        }
        if (due.length > 0) {
            lock.notifyAll();
        }
    }

    /** Starts the next range queued ahead of an in-order reader that is still to start; false if there is none. */
    private boolean startAhead() {
        for (int[] a; (a = ahead.poll()) != null; ) {
            PullFile f = active.get(a[0]);
            if (f != null && f.todo(a[1])) {
                startRange(f, a[1], true);
                return true;
            }
        }
        return false;
    }

    /** Starts the ranges a waiting reader needs from the first not started yet; false if there is none. */
    private boolean startUrgent(FileStore store, Map<Integer, PartitionInfo> left) throws IOException {
        for (long[] u; (u = urgent.peek()) != null; ) {
            int partition = (int) u[0];
            PullFile f = active.get(partition);
            if (f == null) {
                PartitionInfo info = left.remove(partition);
                f = info == null ? null : begin(info, store);
                if (f == null) {
                    urgent.poll();
                    continue;
                }
            }
            int r = f.firstTodo(u[1], u[2]);
            if (r >= 0) {
                // the reader's whole run of ranges still to start goes as one streamed transfer: a round trip
                // per range cost ~20% at 8 MiB (bench/RESULTS.md, "one transfer per ridden file")
                int n = 1;
                int last = f.rangeOf(u[1] + u[2] - 1);
                while (r + n <= last && f.todo(r + n)) {
                    n++;
                }
                startRun(f, r, n, true);
                return true;
            }
            urgent.poll();                         // all its ranges are on their way
        }
        return false;
    }

    /**
     * Starts the next range in background order: the one nearest after where readers read ({@link
     * ReadAhead#behindReaders}), else partitions begun first front to back, then the next one in order.
     */
    private boolean startBackground(FileStore store, Map<Integer, PartitionInfo> left) throws IOException {
        int[] next = readAhead.behindReaders(active.values());
        if (next != null) {
            startRange(active.get(next[0]), next[1], false);
            return true;
        }
        for (PullFile f : active.values()) {
            int r = f.nextTodo();
            if (r >= 0) {
                startRange(f, r, false);
                return true;
            }
        }
        while (!left.isEmpty()) {
            PullFile f = begin(pick(left), store);
            if (f != null) {
                startRange(f, f.nextTodo(), false);
                return true;
            }
        }
        return false;
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

    /**
     * Takes {@code bytes} of the --local-capacity budget for something a pulled partition brings along (its decoded
     * copy, DecodedArenas#addPulled), only if the budget still holds every partition not yet begun after them: such
     * extras never displace a pull. False, taking nothing, otherwise (or when the file system cannot be asked).
     */
    public boolean reserve(long bytes) {
        synchronized (lock) {
            long notBegun = 0;
            for (PartitionInfo p : order) {
                if (planned.contains(p.index()) && !active.containsKey(p.index())) {
                    notBegun += p.bytes();
                }
            }
            try {
                if (bytes + notBegun > capacity.remaining(Files.getFileStore(partsDir), reserved)) {
                    return false;
                }
            } catch (IOException e) {
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
            lock.notifyAll();
        }
    }

    /** Creates the partition's temporary file if it fits the capacity budget; null (and skipped) if not. */
    private PullFile begin(PartitionInfo info, FileStore store) throws IOException {
        if (info.bytes() > capacity.remaining(store, reserved)) {
            planned.remove(info.index());          // fetched on demand; a smaller one may still fit
            lock.notifyAll();
            return null;
        }
        Path tmp = partsDir.resolve(".pull-" + info.fileName());
        FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
        int[] entries = entriesOf[info.index()] != null ? entriesOf[info.index()] : new int[0];
        entriesOf[info.index()] = null;            // the PullFile keeps them from here on
        PullFile f = new PullFile(info, tmp, out, CHUNK_BYTES, entries,
                LandedCrcs.of(info, CHUNK_BYTES, bodies, entries));
        opened.add(out);
        reserved += info.bytes();
        active.put(info.index(), f);
        return f;
    }

    private void startRange(PullFile f, int range, boolean forReader) {
        startRun(f, range, 1, forReader);
    }

    /** Starts ranges [range, range + count) as one transfer, one slot of {@link #IN_FLIGHT}. */
    private void startRun(PullFile f, int range, int count, boolean forReader) {
        for (int i = 0; i < count; i++) {
            f.started(range + i);
        }
        inFlight++;
        long position = f.position(range);
        long length = f.position(range + count - 1) + f.length(range + count - 1) - position;
        try {
            (forReader ? readerChunks : chunks).execute(() -> {
                IOException failure = null;
                try {
                    fetchRange(f, position, length, forReader);
                } catch (IOException e) {
                    failure = e;
                } catch (RuntimeException e) {
                    failure = new IOException(e.getMessage(), e);
                }
                synchronized (lock) {
                    landings.add(new Landing(f, range, count, failure));
                    lock.notifyAll();
                }
            });
        } catch (RejectedExecutionException shuttingDown) {
            landings.add(new Landing(f, range, count, new IOException("stopped at job end")));
        }
    }

    /**
     * Checks the whole file, renames it into place and makes it a local partition; false if it failed. Runs on
     * the publisher thread.
     */
    private boolean publish(PullFile f) {
        Path target = partsDir.resolve(f.info.fileName());
        boolean published = false;
        boolean usable = false;
        try {
            check(f.info, f.channel, f.crcs);
            boolean sliced;
            synchronized (lock) {
                sliced = f.sliced;
                f.abandoned = true;              // no new slice of the pull file's name from here on
            }
            if (sliced) {
                Files.createLink(target, f.tmp); // a second name: slices published while it was pulled name f.tmp
            } else {
                Files.move(f.tmp, target, StandardCopyOption.ATOMIC_MOVE);
            }
            published = true;
            local.add(f.info.index(), target);
            f.crcs.settle(bodies, f.entries, check);   // before its slices: publishing them reads no body back
            IntConsumer added = whenAdded;
            if (added != null) {
                added.accept(f.info.index());   // its files become slices (docs/slices.md)
            }
            usable = true;
            return true;
        } catch (IOException | RuntimeException e) {
            if (!published) {
                abandon(f, e instanceof IOException io ? io : new IOException(e.getMessage(), e));
                return false;
            }
            System.err.println("fanstore rank " + rank + ": pulled " + f.info.fileName() + " but cannot use it: "
                    + e.getMessage() + "; its files are fetched on demand");
            return false;
        } finally {
            synchronized (lock) {
                if (usable) {
                    pulledPartitions++;           // under the lock, before active empties: run() reports them
                    pulledBytes += f.info.bytes();
                }
                active.remove(f.info.index());
                planned.remove(f.info.index());
                lock.notifyAll();
            }
        }
    }

    /** Gives the partition up: its files are fetched on demand; the temporary file goes. */
    private void abandon(PullFile f, IOException why) {
        if (!stopping) {
            System.err.println("fanstore rank " + rank + ": prefetch of " + f.info.fileName() + " abandoned: "
                    + (why != null ? why.getMessage() : "unknown failure") + "; its files are fetched on demand");
        }
        boolean keep;
        List<long[]> unread;
        synchronized (lock) {
            planned.remove(f.info.index());
            reserved -= f.info.bytes();
            f.abandoned = true;             // no new slice of it from here on: the kept ranges are final
            keep = f.sliced;
            unread = keep ? f.unkeptPages(PAGE) : List.of();
            lock.notifyAll();
        }
        if (keep) {
            String freed;
            try {
                freed = "its other " + PunchHoles.punch(f.tmp, unread) + " bytes are freed";
            } catch (IOException e) {
                freed = "its other bytes stay too (" + e.getMessage() + ")";
            }
            if (!stopping) {
                System.err.println("fanstore rank " + rank + ": " + f.tmp.getFileName() + " stays until the job ends:"
                        + " files read in place from its pulled bytes (each checked) are published from it; "
                        + freed);
            }
            return;
        }
        try {
            Files.deleteIfExists(f.tmp);       // a reader still reading it keeps its open channel
        } catch (IOException e) {
            System.err.println("fanstore rank " + rank + ": cannot remove " + f.tmp + ": " + e.getMessage());
        }
    }

    /** Punches an abandoned, kept pull file again after a range landed in it late (quietly: said once already). */
    private void punchAgain(PullFile f) {
        List<long[]> unread;
        synchronized (lock) {
            unread = f.unkeptPages(PAGE);
        }
        try {
            PunchHoles.punch(f.tmp, unread);
        } catch (IOException e) {
            // the first punch's log line said what happened to this file
        }
    }

    /**
     * Ranges in flight allowed now for the background order: {@link #IN_FLIGHT}; none while readers fetch whole
     * files across the link (this rank's, or a peer's asking this rank) or this node's readers are short of CPU
     * and none missed on a partition being pulled lately ({@link ReaderCpu}: warm epochs then read at their speed,
     * not the pull's; a first epoch's readers still ride it), except one once
     * {@link #READERS_FIRST_NANOS} passed since the last range started, so a pull under readers that never stop
     * missing still moves (~50 MB/s, not for ever nothing); {@link #PEERS_ONLY_FLOOR_NANOS} instead while only
     * peers' readers need this node. Ranges a reader waits for are not limited.
     */
    private int limit(long now, long lastStart) {
        long since = limitAt == 0 ? 0 : now - limitAt;
        limitAt = now;
        boolean yields = demand.readersFetching(now, PEER_READERS_NANOS)
                || riding == 0 && now - riderAt > RIDERS_RECENT_NANOS && demand.readersStarved(now);
        if (!yields) {
            return IN_FLIGHT;
        }
        long floor = READERS_FIRST_NANOS;
        if (demand.onlyPeersRead(now, PEER_READERS_NANOS, OWN_IDLE_NANOS)) {
            floor = PEERS_ONLY_FLOOR_NANOS;
            peersOnlyNanos += since;
        }
        return now - lastStart >= floor ? 1 : 0;
    }

    private void fetchRange(PullFile f, long position, long length, boolean forReader) throws IOException {
        PartitionInfo info = f.info;
        IOException last = null;
        for (int holder : placement.holders(info.index())) {
            if (holder == rank) {
                continue;
            }
            PositionalSink sink = PositionalSink.draining(f.channel, f.tmp, position);
            WritableByteChannel summed = f.crcs.summing(sink, position);
            try {
                long object = LocalPartitions.partitionObject(info.index());
                if (forReader) {
                    fetcher.fetchRangeForReader(holder, object, position, length, summed, timeout);
                } else {
                    fetcher.fetchRange(holder, object, position, length, summed, timeout);
                }
            } catch (IOException e) {
                last = e;
                continue;
            }
            sink.rethrow();
            return;
        }
        throw last != null ? last : new IOException("no other rank holds " + info.fileName());
    }

    /**
     * The manifest's length and whole-file CRC32C: the CRC from the ranges' as they landed (LandedCrcs), read back
     * from the written file only if some range's is missing.
     */
    private static void check(PartitionInfo info, FileChannel file, LandedCrcs crcs) throws IOException {
        long at = file.size();
        long landed = crcs.whole();
        int sum;
        if (landed != LandedCrcs.UNKNOWN) {
            sum = (int) landed;
        } else {
            CRC32C crc = new CRC32C();
            ByteBuffer buf = ByteBuffer.allocateDirect(CHECK_BUFFER);
            at = 0;
            for (int n; (n = file.read(buf, at)) > 0; at += n) {
                buf.flip();
                crc.update(buf);
                buf.clear();
            }
            sum = (int) crc.getValue();
        }
        if (at != info.bytes() || sum != info.crc32c()) {
            throw new IOException(String.format("pulled %d bytes with CRC32C %08x, the manifest says %d bytes"
                    + " with %08x", at, sum, info.bytes(), info.crc32c()));
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
            logCounters();
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
        synchronized (lock) {
            lock.notifyAll();
        }
        try {
            thread.join(timeout.toMillis() + 1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();  // shutting down anyway: let the caller see the interrupt
        }
        chunks.shutdownNow();
        readerChunks.shutdownNow();
        publisher.shutdown();
        try {
            publisher.awaitTermination(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (lock) {
            for (FileChannel c : opened) {
                try {
                    c.close();
                } catch (IOException e) {
                    // the job is ending; the file is removed or renamed already
                }
            }
            opened.clear();
        }
        if (verbose && allLocal) {
            System.err.print(String.format("fanstore rank %d: after all partitions were local: %d opens decoded"
                            + " locally, %d fetched remotely%n", rank, demand.localDecodes() - localBeforeAllLocal,
                    demand.remoteFetches() - remoteBeforeAllLocal));
        }
    }

    /** The fetch of ranges [range, range + count) ended: landed (failure null) or not. */
    private record Landing(PullFile file, int range, int count, IOException failure) {
    }
}
