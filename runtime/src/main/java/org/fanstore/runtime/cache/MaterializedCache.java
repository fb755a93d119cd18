package org.fanstore.runtime.cache;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.fanstore.runtime.layout.RankDirectory;

/**
 * Files materialised on tmpfs, or on node-local disk from {@link #LOCAL_MIN_BYTES} (decompressed or fetched
 * bodies), bounded by bytes (both places together), evicted by CLOCK (second chance).
 *
 * <p>Invariants: the bytes of files present plus bytes reserved for files being written never exceed the
 * capacity; a file appears under its final name only when complete and checked (written under a temporary
 * name, then renamed), so a reader never opens a partial file; two requests for the same id materialise it once.
 * Eviction unlinks: a reader that already opened the file keeps its data until it closes (tmpfs then still
 * holds those pages, outside this bound; that is the price of handing out real descriptors).
 *
 * <p>Why CLOCK: the shim opens a present file straight from this directory without asking, so most hits never
 * reach this class; they only set the file's {@link ReferenceBits reference bit}. The hand is the head of the
 * present files in arrival order: a set bit is cleared and the file goes to the back (its second chance), a
 * clear bit is evicted. A file arrives with its bit clear: the open that produced it does not count, so a
 * file read once per epoch goes before one read again since the hand last passed.
 */
public final class MaterializedCache {

    /** Writes the complete body of one file. */
    @FunctionalInterface
    public interface Materializer {
        void writeTo(FileChannel out) throws IOException;
    }

    /**
     * Files from this size on are materialised on node-local disk, smaller ones on tmpfs. Why: reads of large
     * tmpfs files run at a third of ext4's speed here (4 KiB pages against large folios; bench/RESULTS.md,
     * "large materialised files on local disk"), while creating a small file costs ~7x more on the disk.
     */
    public static final long LOCAL_MIN_BYTES = 1L << 20;

    private final Path dir;
    /** Where files of {@code refs.localMinBytes()} bytes or more go; null: everything in {@link #dir}. */
    private final Path localDir;
    private final long capacity;
    private final Object lock = new Object();
    private final ReferenceBits refs;
    /** In hand order: the head is the next file the hand looks at. */
    private final LinkedHashMap<Integer, Long> present = new LinkedHashMap<>(1024);
    private final Map<Integer, CompletableFuture<Path>> inFlight = new HashMap<>();
    private long usedBytes;
    private long reservedBytes;
    private long evictions;

    /** A cache in {@code dir} whose entry ids index {@code refs}. */
    public MaterializedCache(Path dir, long capacityBytes, ReferenceBits refs) throws IOException {
        this(dir, null, capacityBytes, refs);
    }

    /**
     * A cache in {@code dir} and, for files of at least {@code refs.localMinBytes()} bytes, in {@code localDir}
     * (node-local disk); {@code capacityBytes} bounds both together.
     */
    public MaterializedCache(Path dir, Path localDir, long capacityBytes, ReferenceBits refs) throws IOException {
        if (capacityBytes <= 0) {
            throw new IllegalArgumentException("cache capacity must be positive, got " + capacityBytes);
        }
        this.dir = Files.createDirectories(dir);
        this.localDir = localDir == null ? null : Files.createDirectories(localDir);
        this.capacity = capacityBytes;
        this.refs = refs;
    }

    /**
     * The path of file {@code id} when it is present (counted as a use), null otherwise. Never waits beyond
     * the lock's short critical sections: the dispatcher thread answers hits with it.
     */
    public Path lookup(int id) {
        Long size;
        synchronized (lock) {
            size = present.get(id);
            if (size == null) {
                return null;
            }
        }
        refs.set(id);
        return pathOf(id, size);
    }

    /**
     * The path of the materialised file {@code id} of {@code size} bytes, producing it if absent.
     *
     * @throws CacheFullException when the file is larger than the whole cache, or no room frees up before the
     *                            deadline because every byte is reserved by files still being written
     */
    public Path obtain(int id, long size, Materializer producer, long timeoutNanos) throws IOException {
        long deadline = System.nanoTime() + timeoutNanos;
        CompletableFuture<Path> running;
        CompletableFuture<Path> mine = null;
        synchronized (lock) {
            if (present.get(id) != null) {
                refs.set(id);
                return pathOf(id, size);
            }
            running = inFlight.get(id);
            if (running == null) {
                reserve(id, size, deadline);
                mine = new CompletableFuture<>();
                inFlight.put(id, mine);
            }
        }
        // Waiting happens outside the lock: the producer needs it to publish its result.
        return mine == null ? await(running, id, deadline) : produce(id, size, producer, mine);
    }

    private Path produce(int id, long size, Materializer producer, CompletableFuture<Path> mine) throws IOException {
        Path target = pathOf(id, size);
        Path tmp = target.resolveSibling(RankDirectory.CACHE_FILE.fileName(id) + ".tmp");  // same file system
        boolean done = false;
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
            refs.clear(id);  // before the name appears: a direct open after it may set the bit and must keep it
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            done = true;
        } finally {
            synchronized (lock) {
                reservedBytes -= size;
                inFlight.remove(id);
                if (done) {
                    present.put(id, size);
                    usedBytes += size;
                }
                lock.notifyAll();
            }
            if (!done) {
                mine.completeExceptionally(new IOException("materialising entry " + id + " failed"));
                Files.deleteIfExists(tmp);
            }
        }
        mine.complete(target);
        return target;
    }

    /** Makes room for size bytes by evicting cold files; caller holds the lock. */
    private void reserve(int id, long size, long deadline) throws IOException {
        if (size > capacity) {
            throw new CacheFullException("entry " + id + " needs " + size + " bytes but the cache holds "
                    + capacity + ": raise --cache-mb");
        }
        while (usedBytes + reservedBytes + size > capacity) {
            if (!evictOne()) {
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
            Files.deleteIfExists(pathOf(id, size));
            return true;
        }
        return false;
    }

    private static Path await(CompletableFuture<Path> running, int id, long deadline) throws IOException {
        try {
            return running.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new IOException("timed out waiting for another request to materialise entry " + id, e);
        } catch (ExecutionException e) {
            throw new IOException("materialising entry " + id + " failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /** Where file {@code id} lives if it is below the local threshold (the tmpfs directory). */
    public Path pathOf(int id) {
        return RankDirectory.CACHE_FILE.in(dir, id);
    }

    /**
     * Where file {@code id} of {@code size} bytes lives. The shim derives the same directory from the entry's
     * size and the threshold in cache.ref (cache_view.c, fs_cache_path), so both must follow this one rule.
     */
    public Path pathOf(int id, long size) {
        boolean local = localDir != null && Long.compareUnsigned(size, refs.localMinBytes()) >= 0;
        return RankDirectory.CACHE_FILE.in(local ? localDir : dir, id);
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

    /** Files evicted so far (for statistics). */
    public long evictions() {
        synchronized (lock) {
            return evictions;
        }
    }

    public long capacity() {
        return capacity;
    }

    /** Thrown when a file cannot fit; the runtime logs it and answers the reader with EIO. */
    public static final class CacheFullException extends IOException {
        private static final long serialVersionUID = 1L;

        public CacheFullException(String message) {
            super(message);
        }
    }
}
