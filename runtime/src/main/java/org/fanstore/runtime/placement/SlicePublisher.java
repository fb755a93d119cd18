package org.fanstore.runtime.placement;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongPredicate;
import org.fanstore.prep.format.FileModes;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.runtime.shm.BackgroundFloor;
import org.fanstore.runtime.shm.SliceMap;

/**
 * Decides which entries the shim may read as slices of a partition copy and publishes them in {@link SliceMap}
 * (docs/slices.md): a regular file stored uncompressed, in a partition copy this node holds (its own, or one the
 * puller has added), whose body has passed its CRC32C check ({@link BodyCheck}). A body that fails is never
 * published: its opens keep getting EIO. With {@code enabled} false (--unpack eager) nothing is published.
 *
 * <p>Callers: the background pass after ready ({@link #publishAll}), an open the shim sent with the slice flag before
 * the pass got there, and the puller for a partition it has just added. They may race on one entry: the check runs
 * at most once per entry (BodyCheck remembers), and both publish the same record.
 */
public final class SlicePublisher implements AutoCloseable {
    /**
     * A reader that needed an entry the pass had not published this recently still needs the pass: it reads where the
     * pass is. A few times a first epoch's gap between such opens; a warm epoch, which opens only published slices,
     * makes the pass give way within this long.
     */
    static final long NEEDED_RECENT_NANOS = 20_000_000L;

    private final MetadataTable table;
    private final BodyIndex bodies;
    private final LocalPartitions local;
    private final BodyCheck check;
    private final SliceMap map;
    private final int regularPartitions;
    private final boolean enabled;
    private final AtomicBoolean warnedLongPath = new AtomicBoolean();
    private volatile boolean closed;
    private volatile DecodedArenas arenas;
    private volatile Thread[] background = new Thread[0];
    /** The background pass's next entry in table order. */
    private final AtomicInteger front = new AtomicInteger();
    /** The pass's next entry after a reader that got ahead of it, taken before front's; none from entries() on. */
    private final AtomicInteger follow = new AtomicInteger(Integer.MAX_VALUE);
    private volatile LongPredicate readersStarved = now -> false;
    /** When a reader last opened an entry the pass had not published ({@link System#nanoTime()}). */
    private volatile long neededAt = System.nanoTime() - NEEDED_RECENT_NANOS - 1;
    /** While the pass gives way, one entry still starts per floor interval across its threads. */
    private final BackgroundFloor floor = new BackgroundFloor();

    public SlicePublisher(MetadataTable table, BodyIndex bodies, LocalPartitions local, BodyCheck check, SliceMap map,
                          int regularPartitions, boolean enabled) {
        this.table = table;
        this.bodies = bodies;
        this.local = local;
        this.check = check;
        this.map = map;
        this.regularPartitions = regularPartitions;
        this.enabled = enabled;
    }

    /**
     * From now on the entries of partitions with a decoded copy are published as slices of that copy, decoded first
     * (every entry of such a partition: the map has one path per partition).
     */
    public void attach(DecodedArenas decoded) {
        this.arenas = decoded;
    }

    /**
     * Makes the background pass give way while {@code starved} says this node's readers are short of CPU
     * ({@link ReaderCpu}) and none of them needed an entry it had not published lately: then they read slices
     * published long before (a warm epoch of one part of the dataset while the pass decodes another) and the pass only
     * prepares what they may read later. Measured on 2 cores: warm passes over the 128 KiB half of an LZ4 set while
     * the pass decoded its 2 MiB half read at 0.4-0.7x native, the same set alone at 1.2-1.4x.
     */
    public void yieldWhen(LongPredicate starved) {
        this.readersStarved = starved;
    }

    /** Whether the pass gives way now ({@code now}: {@link System#nanoTime()}). */
    boolean yields(long now) {
        return now - neededAt > NEEDED_RECENT_NANOS && readersStarved.test(now);
    }

    /**
     * Whether entry index can be a slice now: its partition copy is here and its body is stored raw, or its
     * partition has a decoded copy.
     */
    public boolean publishable(int index) {
        if (!enabled || index < 0 || index >= bodies.entries()) {
            return false;
        }
        int p = bodies.partition(index);
        if (p == BodyIndex.NO_BODY || !FileModes.isRegular(table.mode(index)) || !local.holds(p)
                || slot(p) >= map.slots()) {
            return false;
        }
        DecodedArenas a = arenas;
        return bodies.codec(index) == PartitionDescriptor.CODEC_RAW || a != null && a.covers(p);
    }

    /** Whether entry index is served from its partition's decoded copy rather than the partition copy. */
    public boolean decoded(int index) {
        DecodedArenas a = arenas;
        int p = bodies.partition(index);
        return a != null && p != BodyIndex.NO_BODY && a.covers(p);
    }

    /**
     * Checks and publishes entry index. True when it is published (now or before); false when it cannot be a slice.
     * Throws CorruptBodyException (logged once by BodyCheck) for a body that fails its check.
     */
    public boolean publish(int index) throws IOException {
        return publishFor(index) != NOT_SLICE;
    }

    /** {@link #publishFor}: cannot be a slice. */
    public static final int NOT_SLICE = 0;
    /** {@link #publishFor}: published, and this call decoded nothing. */
    public static final int SLICE = 1;
    /** {@link #publishFor}: published after this call decoded it into its partition's decoded copy. */
    public static final int DECODED_SLICE = 2;

    /**
     * {@link #publishFor} for an open: a reader that had to publish its entry itself is ahead of the background pass,
     * which then goes on just after it ({@link #nextEntry}).
     */
    public int publishForReader(int index) throws IOException {
        boolean unpublished = !map.published(index);
        int got = publishFor(index);
        if (unpublished && got != NOT_SLICE) {
            neededAt = System.nanoTime();
        }
        // a decoded entry: ahead only if this open decoded it (not if it waited for the pass decoding it, which would
        // send the pass back over entries it is busy with); a raw one takes microseconds to check either way
        boolean ahead = decoded(index) ? got == DECODED_SLICE : unpublished && got != NOT_SLICE;
        if (ahead && index + 1 < bodies.entries()) {
            follow.set(index + 1);
        }
        return got;
    }

    /** {@link #publish}, saying whether this call decoded the entry (an open's statistics count that as a decode). */
    public int publishFor(int index) throws IOException {
        if (map.published(index)) {
            return SLICE;
        }
        if (!publishable(index)) {
            return NOT_SLICE;
        }
        int p = bodies.partition(index);
        DecodedArenas a = arenas;
        boolean fromDecoded = a != null && a.covers(p);
        Path copy = fromDecoded ? a.path(p) : local.file(p);
        SliceMap.Layout layout = fromDecoded ? SliceMap.Layout.DECODED : SliceMap.Layout.PARTITION;
        if (!map.publishSlot(slot(p), copy, layout)) {
            // the copy's path does not fit the map, or (a pulled partition just given a decoded copy) the slot names
            // the other layout: no body check spent on an entry never sliced
            if (tooLong(copy) && !warnedLongPath.getAndSet(true)) {
                System.err.println("fanstore: the partition copy " + copy + " has a path longer than "
                        + SliceMap.PATH_MAX + " bytes, so its files are copied out on first open (slower); a"
                        + " shorter --local-dir avoids it");
            }
            return NOT_SLICE;
        }
        if (fromDecoded) {
            int got = a.ensure(index);
            if (got == DecodedArenas.UNSERVED || !map.publish(index, slot(p), copy, a.offset(index), layout)) {
                return NOT_SLICE;
            }
            return got == DecodedArenas.DECODED ? DECODED_SLICE : SLICE;
        }
        check.verify(index);
        return map.publish(index, slot(p), copy, bodies.bodyOffset(index), layout) ? SLICE : NOT_SLICE;
    }

    /**
     * Publishes entry index, stored raw, as a slice of {@code copy}: a byte-identical copy of its partition that is
     * not (yet) this node's local copy, whose bytes of this entry the caller has checked against its CRC32C (a pull
     * file a reader rides, PartitionPuller#sliceablePath). False when it cannot be a slice; the partition's slot keeps
     * the first path published for it, which names the same bytes.
     */
    public boolean publishCopy(int index, Path copy) {
        if (map.published(index)) {
            return true;
        }
        int p = bodies.partition(index);
        if (!enabled || p == BodyIndex.NO_BODY || bodies.codec(index) != PartitionDescriptor.CODEC_RAW
                || !FileModes.isRegular(table.mode(index)) || slot(p) >= map.slots() || decoded(index)) {
            return false;
        }
        if (tooLong(copy)) {
            return false;   // a longer name than the copy's own: the slot stays free for that one
        }
        return map.publish(index, slot(p), copy, bodies.bodyOffset(index), SliceMap.Layout.PARTITION);
    }

    private static boolean tooLong(Path copy) {
        return copy.toAbsolutePath().toString().getBytes(StandardCharsets.UTF_8).length > SliceMap.PATH_MAX;
    }

    /**
     * Publishes every publishable entry not published yet, in table order, except that it jumps to just after a
     * reader that got ahead of it ({@link #nextEntry}); returns how many it published. Several threads may run it
     * at once: each entry is taken by one of them.
     */
    public int publishAll() {
        int count = 0;
        for (int i; awaitTurn() && (i = nextEntry()) < bodies.entries(); ) {
            count += publishQuietly(i);
        }
        return count;
    }

    /** Waits while the pass gives way ({@link #yields}) and this entry is not the floor's; false once closed. */
    private boolean awaitTurn() {
        while (!closed) {
            long now = System.nanoTime();
            if (!yields(now)) {
                return true;
            }
            if (floor.tryStart(now)) {
                return true;
            }
            LockSupport.parkNanos(1_000_000L);  // a reader's need is seen within a millisecond
        }
        return false;
    }

    /**
     * The pass's next entry: after a reader that got ahead of it ({@link #publishForReader}) the ones following that
     * reader, until the end of the table; else the next in table order. A first epoch that reads a part of the
     * dataset (one directory of several; the 2 MiB files of a set holding both sizes) then has the pass decode what
     * it reads next instead of what it does not read yet, and one reading everything in order keeps the pass just
     * ahead of it. Random readers only move where the pass is: the front still reaches every entry, and the pass
     * skips what is published already, so an entry taken twice costs a lookup.
     */
    int nextEntry() {
        for (int f = follow.get(); f < bodies.entries(); f = follow.get()) {
            if (follow.compareAndSet(f, f + 1)) {
                return f;
            }
        }
        return front.getAndIncrement();
    }

    /**
     * The puller's hook for partition p, just added. A partition with compressed entries first gets a decoded copy
     * if {@link DecodedArenas#addPulled} finds the room and its slot still names nothing (a rider may have published
     * raw entries from the pull file: then its LZ4 files keep the per-open path). Then every entry is published as
     * by {@link #publishPartition}, which decodes them into that copy here, on the puller's background thread, so
     * the next epoch reads them as slices instead of decoding each open into the cache.
     */
    public int publishPulled(int p) {
        DecodedArenas a = arenas;
        int slot = slot(p);
        if (enabled && a != null && slot < map.slots() && !map.slotPublished(slot)) {
            a.addPulled(p, copy -> map.publishSlot(slot, copy, SliceMap.Layout.DECODED));
        }
        return publishPartition(p);
    }

    /** Publishes the entries of partition p (just added by the puller); returns how many. */
    public int publishPartition(int p) {
        int count = 0;
        for (int i = 0; i < bodies.entries() && !closed; i++) {
            if (bodies.partition(i) == p) {
                count += publishQuietly(i);
            }
        }
        return count;
    }

    /** 1 if entry i is published now and was not before, else 0; a corrupt body is skipped, not fatal. */
    private int publishQuietly(int i) {
        try {
            return !map.published(i) && publish(i) ? 1 : 0;
        } catch (IOException e) {
            return 0;   // CorruptBodyException: BodyCheck named it in the log; the other files are still good
        }
    }

    /** The map's slot of partition id p: regular partitions first, then broadcast ones. */
    private int slot(int p) {
        return p >= 0 ? p : regularPartitions + (-1 - p);
    }

    /**
     * Starts the background pass ({@link #publishAll}) on {@code threads} daemon threads. For raw bodies it writes
     * nothing to disk: it reads each body once, from the page cache the load just filled, for its CRC. Started before
     * ready, it is mostly done by the time readers arrive (536 MB in 0.1 s on one core here); a reader that gets there
     * first has the entry checked on demand.
     */
    public void startBackground(int rank, boolean verbose, int threads) {
        long t0 = System.nanoTime();
        AtomicInteger published = new AtomicInteger();
        AtomicInteger running = new AtomicInteger(threads);
        Thread[] started = new Thread[threads];
        for (int s = 0; s < threads; s++) {
            Thread t = new Thread(() -> {
                published.addAndGet(publishAll());
                if (running.decrementAndGet() == 0 && verbose && !closed) {
                    System.err.printf("fanstore rank %d: published %d slices in %.2f s (%d threads)%n", rank,
                            published.get(), (System.nanoTime() - t0) / 1e9, threads);
                }
            }, "fanstore-slices-" + s);
            t.setDaemon(true);
            started[s] = t;
        }
        background = started;
        for (Thread t : started) {
            t.start();
        }
    }

    /** Makes every publishing loop stop at its next entry (the job is ending); {@link #close} also waits for them. */
    public void stopPublishing() {
        closed = true;
    }

    /** Stops the background pass (bounded wait: it checks between entries). */
    @Override
    public void close() {
        closed = true;
        long deadline = System.nanoTime() + 5_000_000_000L;
        for (Thread t : background) {
            try {
                t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();  // shutting down anyway: let the caller see the interrupt
                return;
            }
        }
    }
}
