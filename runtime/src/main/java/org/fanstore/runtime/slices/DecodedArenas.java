package org.fanstore.runtime.slices;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.IntFunction;
import java.util.function.LongConsumer;
import java.util.function.LongPredicate;
import java.util.function.Predicate;
import java.util.zip.CRC32C;
import org.fanstore.prep.format.Lz4Chunked;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.runtime.fileblocks.Preallocate;
import org.fanstore.runtime.fill.PositionalSink;
import org.fanstore.runtime.placement.BodyIndex;
import org.fanstore.runtime.placement.BodyCheck;
import org.fanstore.runtime.placement.LocalPartitions;
import org.fanstore.runtime.placement.CorruptBodyException;

/**
 * Decoded copies of this node's compressed partitions, read as slices (docs/slices.md, "compressed partitions").
 * Without one, each open of an LZ4 file makes a new tmpfs file (decode, create, write, rename: the per-open path),
 * and the kernel's part of that alone (bench/native/tmpfs-floor.c) is slower than LZ4-java's decode. Here each
 * compressed partition copy {@code part-N.fsp} this node holds gets one file beside it, {@code part-N.fsp.raw},
 * holding every entry's raw bytes at a fixed offset (entries in index order, each from a 4 KiB boundary, so no page is
 * shared by two files). An entry is decoded into its place once, its CRC32C checked on the decoded bytes
 * ({@link BodyCheck#settle}), and only then published as a slice of that file; the slot of partition N in
 * slices.map names the decoded file, so every entry of such a partition (raw-stored ones too) is served from it.
 *
 * <p>Who decodes: the fill's publish thread (fanstore-fill-publish), and an open that gets there
 * first, also while the partition is still filling (a rider decodes from the fill file's landed ranges,
 * {@link #ensure(int, FileChannel)}). Two callers of one entry decode it once: the second waits for the first
 * (bounded).
 *
 * <p>Room: all decoded copies are made only if the local file system keeps max(10% of its size, 1 GiB) free after
 * them (stricter than --local-capacity auto's 10%: decoded copies are optional, kept partitions are not);
 * otherwise none, and LZ4 files take the per-open path (the log says so). A write that fails anyway (the disk
 * filled since) leaves that entry to the per-open path, never an error.
 *
 * <p>Pulled partitions ({@link #addPulled}) get a decoded copy too, once the fill has added them, taken from the
 * fill's --local-capacity budget ({@code Fill#reserve}: only room no partition still to pull needs), so
 * a decoded copy never displaces a pull. Their files are decoded on the fill's background publish thread; until
 * then, and without the room, they take the per-open path.
 */
public final class DecodedArenas implements AutoCloseable {
    static final int ALIGN = 4096;
    private static final long MIN_MARGIN = 1L << 30;
    private static final int TODO = 0;
    private static final int DECODING = 1;
    private static final int DONE = 2;
    private static final int BAD = 3;
    private static final int UNAVAILABLE = 4;

    private final MetadataTable table;
    private final BodyIndex bodies;
    private final LocalPartitions local;
    private final BodyCheck check;
    /** Written once per partition: at creation, or by addPulled after its offsets (readers check covers first). */
    private final Map<Integer, Path> paths;
    private final Map<Integer, FileChannel> channels;
    private final long[] offsets;
    private final AtomicIntegerArray state;
    private final Object settled = new Object();
    /** Partitions addPulled was asked for and did not give a copy (none needed, no room, the slot taken). */
    private final Set<Integer> refused = new HashSet<>();
    private final AtomicBoolean warnedWrite = new AtomicBoolean();
    private final AtomicBoolean warnedRoom = new AtomicBoolean();
    private final String logPrefix;
    private volatile LongPredicate room;
    private volatile LongConsumer roomBack;
    private volatile IntFunction<Path> places;

    private DecodedArenas(MetadataTable table, BodyIndex bodies, LocalPartitions local, BodyCheck check,
                          Map<Integer, Path> paths, Map<Integer, FileChannel> channels, long[] offsets, int rank) {
        this.table = table;
        this.bodies = bodies;
        this.local = local;
        this.check = check;
        this.paths = new ConcurrentHashMap<>(paths);
        this.channels = new ConcurrentHashMap<>(channels);
        this.offsets = offsets;
        this.state = new AtomicIntegerArray(offsets.length);
        this.logPrefix = "fanstore rank " + rank + ": ";
    }

    /**
     * Decoded copies for every local partition holding a compressed entry, or none (an empty set, with one log line
     * saying why) when they would not leave the file system its margin.
     */
    public static DecodedArenas create(MetadataTable table, BodyIndex bodies, LocalPartitions local, BodyCheck check,
                                       int rank) throws IOException {
        int n = bodies.entries();
        long[] offsets = new long[n];
        Map<Integer, Long> ends = new HashMap<>();
        for (int i = 0; i < n; i++) {
            offsets[i] = -1;
            int p = bodies.partition(i);
            if (p != BodyIndex.NO_BODY && local.holds(p) && bodies.codec(i) != PartitionDescriptor.CODEC_RAW) {
                ends.putIfAbsent(p, 0L);
            }
        }
        for (int i = 0; i < n; i++) {
            int p = bodies.partition(i);
            Long end = p == BodyIndex.NO_BODY ? null : ends.get(p);
            if (end != null) {
                offsets[i] = end;
                ends.put(p, end + aligned(table.size(i)));
            }
        }
        Map<Integer, Path> paths = new HashMap<>();
        Map<Integer, FileChannel> channels = new HashMap<>();
        long total = ends.values().stream().mapToLong(Long::longValue).sum();
        if (total > 0) {
            FileStore store = Files.getFileStore(local.file(ends.keySet().iterator().next()).getParent());
            long margin = Math.max(store.getTotalSpace() / 10, MIN_MARGIN);
            if (store.getUsableSpace() - margin < total) {
                System.err.println("fanstore rank " + rank + ": the decoded copies of this node's LZ4 partitions"
                        + " need " + total + " bytes and the local directory can spare "
                        + Math.max(0, store.getUsableSpace() - margin) + ": LZ4 files are decoded per open instead"
                        + " (slower first reads); a larger --local-dir avoids it");
                java.util.Arrays.fill(offsets, -1);
            } else {
                for (Map.Entry<Integer, Long> e : ends.entrySet()) {
                    Path path = copyPath(local, e.getKey());
                    FileChannel c = openCopy(path, e.getValue());
                    paths.put(e.getKey(), path);
                    channels.put(e.getKey(), c);
                }
            }
        }
        return new DecodedArenas(table, bodies, local, check, paths, channels, offsets, rank);
    }

    /**
     * Where pulled partitions' decoded copies take their room from ({@code take}: true when the bytes were granted),
     * and where a copy that was granted room but not made gives it back.
     */
    public void roomFrom(LongPredicate take, LongConsumer giveBack) {
        this.roomBack = giveBack;
        this.room = take;
    }

    /**
     * Gives kept partition p a decoded copy when it holds compressed entries and the budget grants its bytes: once it
     * is a complete local copy, or while it is still filling (a reader rides its ranges, {@link #ensure(int,
     * FileChannel)}). Synchronized: the fill's publish thread and open workers may ask for the same partition.
     * {@code claim} must make the copy's path the partition's slice slot and says whether it did; when it cannot (the
     * slot already names the pull file) the copy is dropped. Returns whether p is covered now.
     * Never throws: without a decoded copy the per-open path serves the partition.
     */
    public synchronized boolean addPulled(int p, Predicate<Path> claim) {
        LongPredicate budget = room;
        if (budget == null || paths.containsKey(p) || refused.contains(p)) {
            return paths.containsKey(p);   // refused before: asked again by every rider, answered without a scan
        }
        Path path = copyPath(p);
        if (path == null) {
            return false;                  // not kept here (or no longer)
        }
        int n = bodies.entries();
        int[] entries = new int[64];
        int count = 0;
        boolean compressed = false;
        long length = 0;
        for (int i = 0; i < n; i++) {
            if (bodies.partition(i) == p) {
                if (count == entries.length) {
                    entries = java.util.Arrays.copyOf(entries, count * 2);
                }
                entries[count++] = i;
                compressed |= bodies.codec(i) != PartitionDescriptor.CODEC_RAW;
                length += aligned(table.size(i));
            }
        }
        if (!compressed || length == 0) {
            refused.add(p);
            return false;
        }
        if (!budget.test(length)) {
            refused.add(p);
            if (!warnedRoom.getAndSet(true)) {
                System.err.println(logPrefix + "no room left in --local-capacity for the " + length + "-byte decoded"
                        + " copy of pulled partition " + local.file(p).getFileName() + " beside the partitions still"
                        + " to pull: such LZ4 files are decoded per open instead");
            }
            return false;
        }
        FileChannel c = null;
        try {
            c = openCopy(path, length);
            if (!claim.test(path)) {
                c.close();
                Files.deleteIfExists(path);
                roomBack.accept(length);
                return false;
            }
        } catch (IOException e) {
            System.err.println(logPrefix + "cannot make the decoded copy " + path + " (" + e.getMessage()
                    + "): its LZ4 files are decoded per open instead");
            closeQuietly(c);
            deleteQuietly(path);
            roomBack.accept(length);
            return false;
        }
        long end = 0;
        for (int k = 0; k < count; k++) {
            offsets[entries[k]] = end;
            end += aligned(table.size(entries[k]));
        }
        channels.put(p, c);
        paths.put(p, path);              // after the offsets: covers(p) publishes them
        return true;
    }

    /**
     * Where kept partitions' copies are, or will be once filled ({@code Fill#copyPath}): a partition still filling
     * gets its decoded copy beside the name its copy will have.
     */
    public void placesFrom(IntFunction<Path> places) {
        this.places = places;
    }

    /** part-N.fsp.raw beside partition p's copy (complete, or still filling), or null when p is not kept. */
    private Path copyPath(int p) {
        IntFunction<Path> where = places;
        Path file = local.holds(p) ? local.file(p) : where == null ? null : where.apply(p);
        return file == null ? null : file.resolveSibling(file.getFileName() + ".raw");
    }

    /** part-N.fsp.raw beside partition p's copy. */
    private static Path copyPath(LocalPartitions local, int p) {
        return local.file(p).resolveSibling(local.file(p).getFileName() + ".raw");
    }

    /**
     * A new file of {@code length} bytes whose blocks are allocated now ({@link Preallocate}), or a sparse one where
     * the file system cannot; each entry's bytes are written when it is decoded.
     */
    private static FileChannel openCopy(Path path, long length) throws IOException {
        FileChannel c = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
        try {
            if (length > 0 && !Preallocate.blocks(path, length)) {
                c.write(ByteBuffer.wrap(new byte[1]), length - 1);
            }
            return c;
        } catch (IOException e) {
            closeQuietly(c);
            throw e;
        }
    }

    private static long aligned(long size) {
        return (size + ALIGN - 1) / ALIGN * ALIGN;
    }

    /** Whether partition p's entries are served from a decoded copy. */
    public boolean covers(int partition) {
        return paths.containsKey(partition);
    }

    /** The decoded copy of partition p (covered). */
    public Path path(int partition) {
        return paths.get(partition);
    }

    /** Where entry index's raw bytes start in its partition's decoded copy. */
    public long offset(int index) {
        return offsets[index];
    }

    /** {@link #ensure}: the entry cannot be served from the decoded copy (the per-open path serves it). */
    public static final int UNSERVED = 0;
    /** {@link #ensure}: present and checked before this call, or decoded meanwhile by another caller. */
    public static final int PRESENT = 1;
    /** {@link #ensure}: this call decoded it (the open that did is counted as a decompression). */
    public static final int DECODED = 2;

    /**
     * Makes entry index's raw bytes present and checked in the decoded copy: {@link #PRESENT}, {@link #DECODED}, or
     * {@link #UNSERVED} when they cannot be (a write failed: the per-open path serves it). Throws
     * CorruptBodyException for a body that fails its CRC32C (logged once by BodyCheck), IOException when a
     * concurrent decode of it outlasts the wait.
     */
    public int ensure(int index) throws IOException {
        return ensure(index, null);
    }

    /**
     * {@link #ensure(int)}, decoding from {@code filled} when it is not null: the fill file of the entry's partition,
     * still filling, whose ranges of this body have landed (a rider, docs/slices.md). Bytes from there are not
     * trusted to name a bad body: a read that fails or decodes to the wrong CRC32C leaves the entry to be decoded
     * later from the complete copy, and this call answers {@link #UNSERVED} (the caller's usual path then decides,
     * with its own check).
     */
    public int ensure(int index, FileChannel filled) throws IOException {
        long deadline = System.nanoTime() + DECODE_WAIT_NANOS;
        while (true) {
            int s = state.get(index);
            if (s == DONE) {
                return PRESENT;
            }
            if (s == UNAVAILABLE || offsets[index] < 0) {
                return UNSERVED;
            }
            if (s == BAD) {
                check.verify(index);             // throws: the body failed before
                return UNSERVED;
            }
            if (s == TODO && state.compareAndSet(index, TODO, DECODING)) {
                if (filled != null) {
                    return decodeRider(index, filled) ? DECODED : UNSERVED;
                }
                return decode(index) ? DECODED : UNSERVED;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new IOException("decoding " + name(index) + " took over " + DECODE_WAIT_NANOS / 1_000_000_000L
                        + " s");
            }
            try {
                synchronized (settled) {
                    if (state.get(index) == DECODING) {
                        TimeUnit.NANOSECONDS.timedWait(settled, Math.min(left, DECODE_POLL_NANOS));
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while " + name(index) + " was decoded", e);
            }
        }
    }

    private boolean decode(int index) throws IOException {
        int outcome = UNAVAILABLE;
        try {
            int p = bodies.partition(index);
            CRC32C crc = new CRC32C();
            boolean raw = bodies.codec(index) == PartitionDescriptor.CODEC_RAW;
            // raw: summed on the way; LZ4: the decoder sums what it produces
            PositionalSink out = PositionalSink.throwing(channels.get(p), offsets[index], raw ? crc : null);
            FileChannel in = local.channel(p);
            try {
                if (raw) {
                    long done = 0;
                    long length = bodies.storedLength(index);
                    while (done < length) {
                        long n = in.transferTo(bodies.bodyOffset(index) + done, length - done, out);
                        if (n <= 0) {
                            throw new IOException("the partition ends inside its body");
                        }
                        done += n;
                    }
                } else {
                    Lz4Chunked.decodeTo(in, bodies.bodyOffset(index), bodies.storedLength(index), table.size(index),
                            out, crc);
                }
            } catch (IOException | IllegalArgumentException e) {
                if (out.failure() != null) {
                    throw out.failure();           // the decoded copy's disk, not the body: the per-open path
                }
                outcome = BAD;
                check.verify(index);             // names the bad body in the log and throws
                outcome = UNAVAILABLE;           // the body is fine after all: leave it to the per-open path
                throw new IOException(e.getMessage(), e);
            }
            if (out.written() != table.size(index)) {
                outcome = BAD;
                throw new CorruptBodyException(name(index) + " decodes to " + out.written() + " bytes, its entry says "
                        + table.size(index) + "; not served (readers get EIO)");
            }
            outcome = BAD;
            check.settle(index, (int) crc.getValue());   // throws CorruptBodyException, logged once
            outcome = DONE;
            return true;
        } catch (CorruptBodyException e) {
            throw e;
        } catch (IOException e) {
            warnWrite(index, e);
            return false;
        } finally {
            state.set(index, outcome);
            synchronized (settled) {
                settled.notifyAll();
            }
        }
    }

    /**
     * Decodes entry index from {@code in} (a fill file) into its place and marks it DONE when its CRC32C matches;
     * anything else puts it back to TODO: the complete copy decodes it later ({@link #decode}), which names a bad
     * body. A failed write of the decoded copy is as in {@link #decode}: the per-open path serves the entry.
     */
    private boolean decodeRider(int index, FileChannel in) {
        int outcome = TODO;
        try {
            CRC32C crc = new CRC32C();
            boolean raw = bodies.codec(index) == PartitionDescriptor.CODEC_RAW;
            // raw: summed on the way; LZ4: the decoder sums what it produces
            PositionalSink out = PositionalSink.throwing(channels.get(bodies.partition(index)), offsets[index],
                    raw ? crc : null);
            try {
                long stored = bodies.storedLength(index);
                if (raw) {
                    long done = 0;
                    while (done < stored) {
                        long n = in.transferTo(bodies.bodyOffset(index) + done, stored - done, out);
                        if (n <= 0) {
                            return false;
                        }
                        done += n;
                    }
                } else {
                    Lz4Chunked.decodeTo(in, bodies.bodyOffset(index), stored, table.size(index), out, crc);
                }
            } catch (IOException | IllegalArgumentException e) {
                if (out.failure() != null) {
                    outcome = UNAVAILABLE;             // the decoded copy's disk: the per-open path from now on
                    warnWrite(index, out.failure());
                }
                return false;
            }
            if (out.written() != table.size(index) || (int) crc.getValue() != bodies.crc32c(index)) {
                return false;
            }
            check.settle(index, (int) crc.getValue());   // matches: marks the body checked
            outcome = DONE;
            return true;
        } catch (IOException e) {
            return false;
        } finally {
            state.set(index, outcome);
            synchronized (settled) {
                settled.notifyAll();
            }
        }
    }

    private void warnWrite(int index, IOException e) {
        if (!warnedWrite.getAndSet(true)) {
            System.err.println(logPrefix + "cannot write " + name(index) + " into the decoded copy of its"
                    + " partition (" + e.getMessage() + "); such files are decoded per open instead");
        }
    }

    private String name(int index) {
        return new String(table.key(index), StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        for (FileChannel c : channels.values()) {
            closeQuietly(c);
        }
    }

    private static void deleteQuietly(Path path) {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            // a sparse file nothing refers to: the job's end removes its directory
        }
    }

    private static void closeQuietly(FileChannel c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (IOException e) {
            // nothing to do about it: the job's directory goes at its end anyway
        }
    }
}
