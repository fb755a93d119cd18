package org.fanstore.runtime.cache;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.ObjLongConsumer;
import java.util.function.LongSupplier;
import org.fanstore.runtime.layout.RankDirectory;
import org.fanstore.runtime.stats.RankStats;

/**
 * Files materialised on tmpfs, or on node-local disk from {@link #LOCAL_MIN_BYTES} (decompressed or fetched
 * bodies), bounded by bytes (both places together), evicted by CLOCK (second chance).
 *
 * <p>Invariants: the bytes of files present plus bytes reserved for files being written never exceed the
 * capacity, except for one file larger than the whole cache, written alone into an empty cache; a file appears
 * under its final name only when complete and checked (written under a temporary name, then renamed), so a reader
 * never opens a partial file; two requests for the same id materialise it once.
 *
 * <p>Pins ("never a wrong answer"): every answer, hit or fresh file, is a {@link CachePins pin}, a hard
 * link made under the lock while the file is certainly present, which the reader's shim opens and then unlinks.
 * So an entry the runtime has just answered cannot vanish before the reader's open: eviction unlinks only the
 * file's own name ({@code e<index>}), and a pinned or opened inode keeps its data (open descriptors already did).
 * What that costs in bytes: the cache directory holds at most {@code max(capacity, the one oversized file being
 * written)} plus the pinned files no longer present, and a pin lives from its answer to the shim's open (a few
 * microseconds) or, if its reader died in between, for the grace ({@code PIN_GRACE_NANOS}). So the excess is at
 * most (readers between an answer and their open + readers killed in the last grace) x the largest file.
 * A file larger than the whole cache is still served: written alone into the emptied cache, handed out as a
 * pin only (never present), so each open of it decodes it again, like a stream (and the log says to raise
 * --cache-mb, once).
 *
 * <p>Why CLOCK: the shim opens a present file straight from this directory without asking, so most hits never
 * reach this class; they only set the file's {@link ReferenceBits reference bit}. The hand is the head of the
 * present files in arrival order: a set bit is cleared and the file goes to the back (its second chance), a
 * clear bit is evicted. A file arrives with its bit clear: the open that produced it does not count, so a
 * file read once per epoch goes before one read again since the hand last passed.
 *
 * <p>A full local disk (another job's files, a pull with an explicit --local-capacity) does not fail a read: a
 * large file that finds no room there is written to the tmpfs directory instead ("spilled"), within the same
 * bound. The shim looks for it on the disk, finds nothing and asks the runtime, whose answer (a pin beside the
 * spilled file) it opens: each open of a spilled file costs a round trip, a full disk no error.
 */
public final class MaterializedCache implements RankStats.Gauges {
    /** Writes the complete body of one file. */
    @FunctionalInterface
    public interface Materializer {
        void writeTo(FileChannel out) throws IOException;
    }

    /**
     * Files from this size on are materialised on node-local disk, smaller ones on tmpfs. Why: reads of large
     * tmpfs files are much slower than from ext4 (4 KiB pages against large folios), while creating a small
     * file costs much more on the disk than on tmpfs.
     */
    public static final long LOCAL_MIN_BYTES = 1L << 20;
    /** Free room a large file must leave on the local disk, else it spills: the unpacker and puller write there too. */
    static final long DISK_MARGIN_BYTES = 4L << 20;

    private final Path dir;
    /** Where files of {@code refs.localMinBytes()} bytes or more go; null: everything in {@link #dir}. */
    private final Path localDir;
    /** The local directory's file system, asked for free room before each large file (statvfs); null: none. */
    private final FileStore localStore;
    private final long capacity;
    private final Object lock = new Object();
    private final ReferenceBits refs;
    private final CachePins pins;
    private final IntFunction<String> nameOf;
    private final Consumer<String> warn;
    /** In hand order: the head is the next file the hand looks at. */
    private final LinkedHashMap<Integer, Long> present = new LinkedHashMap<>(1024);
    private final Map<Integer, CompletableFuture<Void>> inFlight = new HashMap<>();
    /** Large files present, or being written, in {@link #dir} because the local disk was full. */
    private final Set<Integer> spilled = new HashSet<>();
    /** Whether the log already said that the local disk is full (said once per job). */
    private boolean warnedSpill;
    private long usedBytes;
    private long reservedBytes;
    private long evictions;
    private long streamed;
    /** Requests for files larger than the cache waiting for it to empty: new reservations wait behind them. */
    private int oversizedWaiting;

    /** A cache in {@code dir} whose entry ids index {@code refs}; logs on stderr, naming entries by index. */
    public MaterializedCache(Path dir, long capacityBytes, ReferenceBits refs) throws IOException {
        this(dir, null, capacityBytes, refs, PIN_GRACE_NANOS, id -> "entry " + id, System.err::println);
    }

    /** As below, pins aged by System.nanoTime(). */
    public MaterializedCache(Path dir, Path localDir, long capacityBytes, ReferenceBits refs, long pinGraceNanos,
                             IntFunction<String> nameOf, Consumer<String> warn) throws IOException {
        this(dir, localDir, capacityBytes, refs, pinGraceNanos, System::nanoTime, nameOf, warn);
    }

    /**
     * A cache in {@code dir} and, for files of at least {@code refs.localMinBytes()} bytes, in {@code localDir}
     * (node-local disk; null: none), {@code capacityBytes} bounding both together, whose entry ids index
     * {@code refs}; {@code nameOf} names an entry in the one-line warnings given to {@code warn} (a pin reclaimed
     * unopened, a file larger than the cache); pins are aged by {@code pinClock} (nanoseconds).
     */
    MaterializedCache(Path dir, Path localDir, long capacityBytes, ReferenceBits refs, long pinGraceNanos,
                      LongSupplier pinClock, IntFunction<String> nameOf, Consumer<String> warn)
        throws IOException {
        if (capacityBytes <= 0) {
            throw new IllegalArgumentException("cache capacity must be positive, got " + capacityBytes);
        }
        this.dir = Files.createDirectories(dir);
        this.localDir = localDir == null ? null : Files.createDirectories(localDir);
        this.localStore = localDir == null ? null : Files.getFileStore(this.localDir);
        this.capacity = capacityBytes;
        this.refs = refs;
        this.nameOf = nameOf;
        this.warn = warn;
        this.pins = new CachePins(pinGraceNanos, pinClock, nameOf, warn);
    }

    /**
     * A new pin of file {@code id} when it is present (counted as a use), null otherwise (or when the pin cannot
     * be made: the caller then takes the {@link #obtain} path, which reports why). Never waits beyond the lock's
     * short critical sections: the dispatcher thread answers hits with it.
     */
    public Path lookup(int id) {
        synchronized (lock) {
            Long size = present.get(id);
            if (size == null) {
                return null;
            }
            refs.set(id);
            try {
                return pins.link(id, pathOf(id, size));
            } catch (IOException e) {
                return null;
            }
        }
    }

    /**
     * A new pin of the materialised file {@code id} of {@code size} bytes, producing the file if absent. The
     * caller hands the pin to exactly one reader, whose shim unlinks it after opening it.
     *
     * @throws CacheFullException when no room frees up before the deadline because every byte is reserved by
     *                            files still being written
     */
    public Path obtain(int id, long size, Materializer producer, long timeoutNanos) throws IOException {
        long deadline = System.nanoTime() + timeoutNanos;
        while (true) {
            CompletableFuture<Void> running;
            CompletableFuture<Void> mine = null;
            synchronized (lock) {
                if (present.get(id) != null) {
                    refs.set(id);
                    return pins.link(id, pathOf(id, size));
                }
                running = inFlight.get(id);
                if (running == null) {
                    // In flight before reserving: reserve() may wait (releasing the lock), and a second request
                    // for this id must then wait for this one, not write the same temporary file beside it.
                    mine = new CompletableFuture<>();
                    inFlight.put(id, mine);
                    try {
                        reserve(id, size, deadline);
                    } catch (IOException | RuntimeException e) {
                        inFlight.remove(id);
                        mine.completeExceptionally(e);
                        throw e;
                    }
                }
            }
            if (mine != null) {
                return produce(id, size, producer, mine);
            }
            // Waiting happens outside the lock: the producer needs it to publish. Then look again: the file is
            // pinned if still present, or (evicted meanwhile by a tiny cache, or too large to stay) made again.
            await(running, id, deadline);
        }
    }

    private Path produce(int id, long size, Materializer producer, CompletableFuture<Void> mine) throws IOException {
        boolean oversized = size > capacity;
        boolean spill = onLocalDisk(size) && !roomOnLocalDisk(size);
        boolean done = false;
        Path pin = null;
        IOException failure = null;
        boolean firstStream = false;
        boolean firstSpill = false;
        CachePins.Pin streamPin = null;
        try {
            try {
                streamPin = write(id, size, producer, spill);
            } catch (IOException e) {
                if (spill || !onLocalDisk(size) || !DiskFull.causedBy(e)) {
                    throw e;
                }
                spill = true;   // the disk filled while this file was being written: once more, on tmpfs
                streamPin = write(id, size, producer, true);
            }
            done = true;
        } finally {
            synchronized (lock) {
                reservedBytes -= size;
                inFlight.remove(id);
                if (done && oversized) {
                    pins.track(streamPin);
                    pin = pins.path(streamPin);
                    firstStream = ++streamed == 1;
                } else if (done) {
                    if (spill) {
                        spilled.add(id);
                        firstSpill = !warnedSpill;
                        warnedSpill = true;
                    }
                    present.put(id, size);
                    usedBytes += size;
                    try {
                        pin = pins.link(id, pathOf(id, size));  // in the same critical section: nothing evicts it
                    } catch (IOException e) {
                        failure = e;
                    }
                }
                lock.notifyAll();
            }
            if (done) {
                mine.complete(null);
            } else {
                mine.completeExceptionally(new IOException("materialising entry " + id + " failed"));
            }
        }
        if (failure != null) {
            throw failure;
        }
        if (firstStream) {
            warn.accept(nameOf.apply(id) + " (" + size + " bytes) is larger than the whole cache (" + capacity
                    + " bytes): each open of such a file decodes it again; raise --cache-mb");
        }
        if (firstSpill) {
            warn.accept(localDir + " is full: files of " + refs.localMinBytes() + " bytes or more are materialised in "
                    + dir + " (memory) instead, within --cache-mb, and each open of them asks the runtime; free space"
                    + " there or choose a larger --local-dir");
        }
        return pin;
    }

    /**
     * Writes file {@code id} under a temporary name, then renames it into place: its cache name (tmpfs when
     * {@code spill}, else where its size says), or a new stream pin (returned) when it is larger than the cache.
     * A failed write leaves nothing behind.
     */
    private CachePins.Pin write(int id, long size, Materializer producer, boolean spill) throws IOException {
        Path target = RankDirectory.CACHE_FILE.in(onLocalDisk(size) && !spill ? localDir : dir, id);
        Path tmp = target.resolveSibling(RankDirectory.CACHE_FILE.fileName(id) + ".tmp");  // same file system
        CachePins.Pin streamPin = null;
        if (size > capacity) {  // too large to stay: goes straight to a pin, never present nor counted
            synchronized (lock) {
                streamPin = pins.next(id, target.getParent());
            }
        }
        boolean written = false;
        try {
            try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                producer.writeTo(out);
                if (out.size() != size) {
                    throw new IOException("materialised " + out.size() + " bytes for entry " + id + ", expected "
                            + size);
                }
            }
            Files.setPosixFilePermissions(tmp, RankDirectory.SERVED_FILE_PERMISSIONS); // see Unpacker#write
            if (streamPin != null) {
                Files.move(tmp, pins.path(streamPin), StandardCopyOption.ATOMIC_MOVE);
            } else {
                refs.clear(id);  // before the name appears: a direct open after it may set the bit and must keep it
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
            written = true;
            return streamPin;
        } catch (IOException e) {
            if (DiskFull.causedBy(e) && !String.valueOf(e.getMessage()).contains(target.getParent().toString())) {
                throw new IOException("No space left on device in " + target.getParent(), e);  // names where
            }
            throw e;
        } finally {
            if (!written) {
                Files.deleteIfExists(tmp);
            }
        }
    }

    /**
     * Whether the local disk can take {@code size} more bytes with {@link #DISK_MARGIN_BYTES} to spare. Unknown
     * (statvfs failed) counts as yes: a write that then finds the disk full is redone on tmpfs.
     */
    private boolean roomOnLocalDisk(long size) {
        try {
            return localStore.getUsableSpace() - size >= DISK_MARGIN_BYTES;
        } catch (IOException e) {
            return true;
        }
    }

    /**
     * Makes room for size bytes by evicting cold files; caller holds the lock. A file larger than the whole cache
     * waits until the cache is empty (evicting everything) and is then written alone; meanwhile new reservations
     * wait behind it, so a steady stream of small files cannot starve it.
     */
    private void reserve(int id, long size, long deadline) throws IOException {
        boolean oversized = size > capacity;
        if (oversized) {
            oversizedWaiting++;
        }
        try {
            while (true) {
                boolean fits = oversized ? usedBytes + reservedBytes == 0
                        : usedBytes + reservedBytes + size <= capacity && oversizedWaiting == 0;
                if (fits) {
                    break;
                }
                // short of room (a small file behind an oversized one only waits: evicting would not help it)
                if ((oversized || oversizedWaiting == 0) && evictOne()) {
                    continue;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new CacheFullException("no room for entry " + id + " (" + size + " bytes): "
                            + reservedBytes + " bytes are being written; raise --cache-mb");
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while waiting for cache room", e);
                }
            }
        } finally {
            if (oversized) {
                oversizedWaiting--;
                lock.notifyAll();   // the reservations that waited behind this one
            }
        }
        reservedBytes += size;
    }

    /**
     * Moves the hand until it evicts one file; false when nothing is present. Each file gets at most one second
     * chance per call, so a reader re-setting bits faster than the hand clears them cannot keep it turning.
     */
    private boolean evictOne() throws IOException {
        int chances = present.size();
        while (!present.isEmpty()) {
            Map.Entry<Integer, Long> head = present.entrySet().iterator().next();
            int id = head.getKey();
            long size = head.getValue();
            present.remove(id);
            if (chances-- > 0 && refs.testAndClear(id)) {
                present.put(id, size);
                continue;
            }
            usedBytes -= size;
            evictions++;
            Path gone = pathOf(id, size);
            spilled.remove(id);
            Files.deleteIfExists(gone);
            return true;
        }
        return false;
    }

    private static void await(CompletableFuture<Void> running, int id, long deadline) throws IOException {
        try {
            running.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new IOException("timed out waiting for another request to materialise entry " + id, e);
        } catch (ExecutionException e) {
            throw new IOException("materialising entry " + id + " failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /** Whether a file of {@code size} bytes is materialised on node-local disk rather than tmpfs. */
    public boolean onLocalDisk(long size) {
        return localDir != null && Long.compareUnsigned(size, refs.localMinBytes()) >= 0;
    }

    /** Where file {@code id} lives if it is below the local threshold (the tmpfs directory). */
    public Path pathOf(int id) {
        return RankDirectory.CACHE_FILE.in(dir, id);
    }

    /**
     * Where file {@code id} of {@code size} bytes lives. The shim derives the same directory from the entry's
     * size and the threshold in cache.ref (cache_view.c, fs_cache_path), so both must follow this one rule; a
     * spilled file (see the class comment) is the exception the shim does not know: it asks, and the answer says.
     */
    public Path pathOf(int id, long size) {
        synchronized (lock) {
            return RankDirectory.CACHE_FILE.in(onLocalDisk(size) && !spilled.contains(id) ? localDir : dir, id);
        }
    }

    /** Bytes of the files present (not counting those being written). */
    public long usedBytes() {
        synchronized (lock) {
            return usedBytes;
        }
    }

    /** Files present (for statistics). */
    public int files() {
        synchronized (lock) {
            return present.size();
        }
    }

    /** Answers pinned so far, and those reclaimed unopened after the grace (for statistics). */
    public long pins() {
        synchronized (lock) {
            return pins.made();
        }
    }

    public long expiredPins() {
        synchronized (lock) {
            return pins.expired();
        }
    }

    /** Opens of files larger than the whole cache, served by a copy for that open alone (for statistics). */
    public long streamed() {
        synchronized (lock) {
            return streamed;
        }
    }

    /** Files evicted so far (for statistics). */
    public long evictions() {
        synchronized (lock) {
            return evictions;
        }
    }

    public long capacity() {
        return capacity;
    }

    /** Thrown when no room frees up in time; the runtime logs it and answers the reader with EIO. */
    public static final class CacheFullException extends IOException {
        private static final long serialVersionUID = 1L;

        public CacheFullException(String message) {
            super(message);
        }
    }

    /** The cache's fields of a statistics line. */
    @Override
    public void report(ObjLongConsumer<String> field) {
        field.accept("cache_bytes", usedBytes());
        field.accept("cache_files", files());
        field.accept("cache_capacity_bytes", capacity());
        field.accept("cache_evictions", evictions());
        field.accept("cache_pins", pins());
        field.accept("cache_pins_expired", expiredPins());
        field.accept("cache_streamed", streamed());
    }
}
