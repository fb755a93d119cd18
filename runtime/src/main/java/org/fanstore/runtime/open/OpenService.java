package org.fanstore.runtime.open;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.zip.CRC32C;
import org.fanstore.prep.format.FileModes;
import org.fanstore.prep.format.Lz4Chunked;
import org.fanstore.prep.format.Lz4StreamingDecoder;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.runtime.cache.DiskFull;
import org.fanstore.runtime.cache.MaterializedCache;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.runtime.fill.Fill;
import org.fanstore.runtime.fill.FillScheduler;
import org.fanstore.runtime.fill.HomeOutage;
import org.fanstore.runtime.placement.BodyIndex;
import org.fanstore.runtime.placement.LocalPartitions;
import org.fanstore.runtime.slices.SlicePublisher;
import org.fanstore.runtime.slices.Unpacker;
import org.fanstore.runtime.shm.Errno;
import org.fanstore.runtime.shm.Request;
import org.fanstore.runtime.shm.RequestHandler;
import org.fanstore.runtime.shm.Responder;
import org.fanstore.runtime.stats.OpenKind;
import org.fanstore.runtime.stats.RankStats;
import org.fanstore.runtime.stats.RemoteStage;

/**
 * Answers the shim's OPEN: the path of a file the reader can open read-only. A local uncompressed file the
 * shim asks about is not unpacked yet: it is unpacked now (see {@link Unpacker}); a file already in the tmpfs
 * cache is answered at once on the dispatcher thread; anything else is materialised into the cache on a worker
 * thread, decompressed from the local partition copy or fetched from a rank that holds it (owner first, then
 * its replicas), and CRC-checked before it becomes visible. A file of a partition still filling here waits for its
 * ranges without holding a worker ({@link LandedFirst}). Most cache hits never get here: the shim opens present
 * files itself (see {@link MaterializedCache}).
 *
 * <p>Errno choices: ENOENT for an unknown key, EROFS for write access or O_TRUNC on an input file (the shim's
 * rule, so a file answers the same whether the shim opens it directly or asks here: O_CREAT without O_EXCL on
 * an existing file just opens it, as Linux does, and O_APPEND means nothing to a reader), EEXIST for
 * O_CREAT|O_EXCL, EISDIR for a directory, EINVAL for any other type ({@link #refusal}); EIO for a corrupt body,
 * an unreachable holder, or no cache room freeing up in time (the runtime's log then says which and what to do).
 * A cache answer is a pin the reader's shim unlinks after its open, so eviction cannot turn it into ENOENT (see
 * {@link MaterializedCache}); a file larger than the whole cache is still served, by a copy of its own.
 *
 * <p>Statistics: {@link #handle} wraps every request's responder in an {@link OpenTimer}, timed to its answer; each
 * serving path says its {@link OpenKind} and, when remote, its stages.
 */
public final class OpenService implements RequestHandler {
    private static final int O_ACCMODE = 03;
    private static final int O_CREAT = 0100;
    private static final int O_EXCL = 0200;
    private static final int O_TRUNC = 01000;
    /** Bit 30 of an OPEN's flags: the client can open a slice (runtime/shm/README.md, "OPEN"). */
    public static final int SLICE_OK = 0x40000000;
    private static final byte[] NO_PATH = new byte[0];

    private final MetadataTable table;
    private final BodyIndex bodies;
    private final LocalPartitions local;
    private final Fill fill;
    private final MaterializedCache cache;
    private final Unpacker unpacker;
    private final int myRank;
    private final ExecutorService workers;
    private final Duration fetchTimeout;
    private final RankStats stats;
    private final LandedFirst landedFirst;
    private volatile SlicePublisher slices;
    /** Logged once: unpacking failed for a full local directory and the cache served instead. */
    private volatile boolean warnedUnpackFull;

    public OpenService(MetadataTable table, BodyIndex bodies, LocalPartitions local, Fill fill,
                       MaterializedCache cache, Unpacker unpacker, int myRank, ExecutorService workers,
                       Duration fetchTimeout, RankStats stats) {
        this.table = table;
        this.bodies = bodies;
        this.local = local;
        this.fill = fill;
        this.cache = cache;
        this.unpacker = unpacker;
        this.myRank = myRank;
        this.workers = workers;
        this.fetchTimeout = fetchTimeout;
        this.stats = stats;
        this.landedFirst = new LandedFirst(fill, bodies, workers, fetchTimeout.toNanos() / 2);
    }

    /** From now on an OPEN with {@link #SLICE_OK} for a publishable entry is answered "slice" (docs/slices.md). */
    public void attach(SlicePublisher publisher) {
        this.slices = publisher;
    }

    /**
     * Decides how an OPEN is served: refused (its errno), a slice, a cached file answered here on the dispatcher
     * thread (a hand-off would cost more), or a worker's job (a rider's slice, else the plain file). The timer wraps
     * the answer; the serving paths only say their kind and stages.
     */
    @Override
    public void handle(Request request, Responder untimed) {
        OpenTimer timer = new OpenTimer(untimed, stats);
        timer.ringWait(request.ringWaitNanos());
        int index = resolve(request);
        int flags = request.flags();
        int errno = refusal(index >= 0, flags, index >= 0 ? table.mode(index) : 0);
        if (errno != 0) {
            timer.error(errno);
            return;
        }
        timer.file(table.size(index));
        SlicePublisher sp = (flags & SLICE_OK) != 0 ? slices : null;
        if (sp != null && sp.publishable(index)) {
            handOff(timer, t -> {
                if (!slice(sp, index, t)) {
                    landedFirst.then(index, t, landed -> plainFile(index, landed, t));
                }
            });
            return;
        }
        Path present = table.localRaw(index) ? null : cache.lookup(index);
        if (present != null) {
            timer.ok(pathOf(present));
            return;
        }
        boolean rider = sp != null && riderCanSlice(index);
        boolean decodedRider = sp != null && decodedRiderCanSlice(sp, index);
        if (rider && !decodedRider) {
            // README, "A rider whose bytes landed is answered on the dispatcher thread": else a worker, as below
            Thread dispatcher = Thread.currentThread();
            landedFirst.then(index, timer, landed -> {
                boolean here = Thread.currentThread() == dispatcher;   // else the fill answered later, on a worker
                if (riderSlice(sp, index, landed, timer, !here)) {
                    if (here) {
                        stats.answeredOnDispatcher();
                    }
                } else if (here) {
                    handOff(timer, t -> {
                        if (!riderSlice(sp, index, landed, t, true)) {
                            usualPath(sp, index, landed, t);
                        }
                    });
                } else {
                    usualPath(sp, index, landed, timer);
                }
            });
            return;
        }
        handOff(timer, t -> landedFirst.then(index, t, landed -> {
            if (!(decodedRider && decodedRiderSlice(sp, index, landed, t))
                    && !(rider && riderSlice(sp, index, landed, t, true))) {
                usualPath(sp, index, landed, t);
            }
        }));
    }

    /**
     * An open its rider paths did not answer: a slice when its partition became a local copy since the dispatcher
     * looked (it completed meanwhile: then its file is checked, or decoded into the decoded copy, as by the first
     * branch of {@link #handle}), else the plain file. Without the first, an open in that moment got its file
     * unpacked or copied into the cache although a slice was there to be had.
     */
    private void usualPath(SlicePublisher sp, int index, LandedFirst.Landed landed, OpenTimer t) {
        if (sp != null && sp.publishable(index) && slice(sp, index, t)) {
            return;
        }
        plainFile(index, landed, t);
    }

    /**
     * The errno policy (class comment): the errno an OPEN is refused with, or 0 to serve it. {@code mode} is the
     * entry's when {@code known}.
     */
    static int refusal(boolean known, int flags, int mode) {
        if (!known) {
            return Errno.ENOENT;
        }
        if ((flags & O_ACCMODE) != 0 || (flags & O_TRUNC) != 0) {
            return Errno.EROFS;
        }
        if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
            return Errno.EEXIST;
        }
        if (FileModes.isDirectory(mode)) {
            return Errno.EISDIR;
        }
        return FileModes.isRegular(mode) ? 0 : Errno.EINVAL;
    }

    /** The one hand-off to a worker: its queue time is a stage of the open; a pool shutting down answers EIO. */
    private void handOff(OpenTimer timer, Consumer<OpenTimer> work) {
        try {
            workers.execute(() -> {
                timer.stage(RemoteStage.QUEUE, System.nanoTime() - timer.started());
                work.accept(timer);
            });
        } catch (RejectedExecutionException shuttingDown) {
            timer.error(Errno.EIO);
        }
    }

    private static byte[] pathOf(Path path) {
        return path.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The answer without slices: the unpacked file for a raw entry of a partition copy here, else the materialised
     * one (worker), from the ranges that landed when there are some.
     */
    private void plainFile(int index, LandedFirst.Landed landed, OpenTimer responder) {
        if (table.localRaw(index) && local.holds(bodies.partition(index))) {
            unpack(index, responder);
            return;
        }
        Path present = cache.lookup(index);
        if (present != null) {
            responder.ok(pathOf(present));
        } else {
            materialize(index, landed, responder);
        }
    }

    /** The client's entry index when it matches the key it sent; otherwise a lookup of the key. */
    private int resolve(Request request) {
        int index = request.entryIndex();
        if (index >= 0 && index < table.entryCount() && table.keyEquals(index, request.key())) {
            return index;
        }
        return table.lookup(request.key());
    }

    /**
     * A slice the shim asked for before the background pass published it: check the body now and answer with an
     * empty path, which tells the shim to read the entry's record in slices.map. A bad body gets EIO. False: not
     * answered, as it cannot be a slice after all (its partition copy's path does not fit slices.map): the spec
     * says the slice bit is then ignored, so the reader gets the file the usual way, not an error.
     */
    private boolean slice(SlicePublisher sp, int index, OpenTimer responder) {
        try {
            int got = sp.publishFor(index);
            boolean raw = bodies.codec(index) == PartitionDescriptor.CODEC_RAW;
            if (got == SlicePublisher.DECODED_SLICE && !raw) {
                // this open decoded it into its partition's decoded copy: a decompression, of its stored bytes
                responder.kind(OpenKind.DECOMPRESSED, bodies.storedLength(index));
            } else {
                // what this open had the runtime read: the body it checked or copied, nothing if that was done before
                boolean read = got == SlicePublisher.CHECKED_SLICE || got == SlicePublisher.DECODED_SLICE;
                responder.kind(OpenKind.LOCAL, read ? table.size(index) : 0);
            }
            if (got == SlicePublisher.NOT_SLICE) {
                return false;
            }
            responder.ok(NO_PATH);
        } catch (IOException | RuntimeException e) {
            System.err.println("fanstore rank " + myRank + ": cannot serve " + keyOf(index)
                    + " from its partition copy: " + e.getMessage());
            responder.error(Errno.EIO);
        }
        return true;
    }

    /** A local uncompressed file the shim found not yet unpacked: unpack it now, answer its usual path. */
    private void unpack(int index, OpenTimer responder) {
        try {
            responder.kind(OpenKind.LOCAL, table.size(index));
            responder.ok(pathOf(unpacker.ensure(index)));
        } catch (IOException | RuntimeException e) {
            if (DiskFull.causedBy(e)) {
                // the local directory filled (a pull with an explicit --local-capacity, another job): a copy in the
                // cache serves the reader instead of ENOSPC (a large one spills to tmpfs); the log says it once
                if (!warnedUnpackFull) {
                    warnedUnpackFull = true;
                    System.err.println("fanstore rank " + myRank + ": " + unpacker.filesDir() + " is full: files"
                            + " that must be plain files (mmap, fopen, exec) are copied into the cache instead");
                }
                materialize(index, null, responder);
                return;
            }
            System.err.println("fanstore rank " + myRank + ": cannot unpack " + keyOf(index) + " ("
                    + table.size(index) + " bytes): " + e.getMessage());
            responder.error(Errno.EIO);
        }
    }

    private void materialize(int index, LandedFirst.Landed landed, OpenTimer responder) {
        try {
            long asked = System.nanoTime();
            long[] written = new long[1];
            Path path = cache.obtain(index, table.size(index), out -> {
                responder.stage(RemoteStage.CACHE_SETUP, System.nanoTime() - asked);
                writeBody(index, out, responder, responder.started() + fetchTimeout.toNanos(), landed);
                written[0] = System.nanoTime();
            }, fetchTimeout.toNanos());
            if (written[0] != 0) {
                responder.stage(RemoteStage.COMMIT, System.nanoTime() - written[0]);
            }
            responder.ok(pathOf(path));
        } catch (HomeOutage.DownException e) {
            responder.error(Errno.EIO);   // the home's outage has its one line (fill/HomeWatch), not one per open
        } catch (IOException | RuntimeException e) {
            boolean full = DiskFull.causedBy(e);
            System.err.println("fanstore rank " + myRank + ": cannot open " + keyOf(index) + " (" + table.size(index)
                    + " bytes): " + e.getMessage() + (full ? " (the cache: lower --cache-mb, or free memory or disk"
                    + " space)" : ""));
            responder.error(full ? Errno.ENOSPC : Errno.EIO);
        }
    }

    /**
     * The body of entry index into out: from the local copy, the ranges that landed, else from a source, whose read
     * gives up at {@code deadline} (System.nanoTime()).
     */
    private void writeBody(int index, FileChannel out, OpenTimer timer, long deadline, LandedFirst.Landed landed)
            throws IOException {
        int partition = bodies.partition(index);
        long stored = bodies.storedLength(index);
        if (local.holds(partition)) {
            timer.kind(bodies.codec(index) == PartitionDescriptor.CODEC_RAW ? OpenKind.LOCAL : OpenKind.DECOMPRESSED,
                    stored);
            try {
                decode(local.channel(partition), bodies.bodyOffset(index), index, out);
            } catch (IOException e) {
                // The log line must say which partition copy to check (fanstore verify), not just the file.
                throw new IOException(e.getMessage() + " (body in the local copy of "
                        + local.file(partition).getFileName() + ")", e);
            }
            return;
        }
        if (fromFill(index, partition, out, timer, landed)) {
            return;
        }
        IOException last = null;
        for (int source : fill.readSources(partition)) {
            try {
                fetchFrom(source, index, out, timer, deadline);
                timer.kind(OpenKind.REMOTE, stored);
                return;
            } catch (IOException e) {
                last = e;
                out.truncate(0);
                out.position(0);
            }
        }
        throw last != null ? last : new IOException("no source left for partition " + partition);
    }

    /**
     * A miss on a partition this node keeps and is still filling decodes the file from the ranges it waited for
     * ({@link LandedFirst}), which went first: no byte is read twice. False: read from the sources (not kept, not in
     * time, or a body that failed its check there).
     */
    private boolean fromFill(int index, int partition, FileChannel out, OpenTimer timer, LandedFirst.Landed landed)
            throws IOException {
        if (landed == null || landed.channel() == null) {
            return false;
        }
        try {
            decode(landed.channel(), bodies.bodyOffset(index), index, out);
        } catch (IOException e) {
            notFromFill(index, partition, e.getMessage());
            out.truncate(0);
            out.position(0);
            return false;
        }
        fromRanges(timer, index, landed);
        return true;
    }

    /** An open served from the fill's ranges counts as a fetch: the wait for them is its first byte. */
    private void fromRanges(OpenTimer timer, int index, LandedFirst.Landed landed) {
        timer.kind(OpenKind.REMOTE, bodies.storedLength(index));
        timer.stage(RemoteStage.FETCH_FIRST_BYTE, landed.landed() - landed.asked());
        timer.stage(RemoteStage.FETCH_REST, System.nanoTime() - landed.resumed());
    }

    private void notFromFill(int index, int partition, String why) {
        System.err.println("fanstore rank " + myRank + ": " + keyOf(index) + " in the filled copy of partition "
                + partition + ": " + why + "; reading it from its sources");
    }

    private String keyOf(int index) {
        return new String(table.key(index), StandardCharsets.UTF_8);
    }

    /** A raw regular file of a partition this node is still filling: a slice of the fill file can serve it. */
    private boolean riderCanSlice(int index) {
        int p = bodies.partition(index);
        return p != BodyIndex.NO_BODY && bodies.codec(index) == PartitionDescriptor.CODEC_RAW
                && FileModes.isRegular(table.mode(index)) && fill.filling(p);
    }

    /**
     * A reader of a partition being filled reads its file in place, as a slice of the fill file (docs/slices.md,
     * "riders"): no copy into the cache. Its ranges go first (as for {@link #fromFill}), its CRC32C is checked on the
     * landed bytes, and the fill file keeps its name for the rest of the job. Anything else (a stall past half the
     * fetch timeout, a bad body, a path too long) takes the usual path: false, not answered. With {@code mayRead}
     * false it does no I/O, so it may run on the dispatcher thread (README.md): only a CRC32C known from the landing
     * serves, and a mismatch is left to the worker the caller hands the open to, which reports it.
     */
    private boolean riderSlice(SlicePublisher sp, int index, LandedFirst.Landed landed, OpenTimer responder,
            boolean mayRead) {
        FileChannel filled = landed == null ? null : landed.channel();
        if (filled == null) {
            return false;
        }
        int p = bodies.partition(index);
        long offset = bodies.bodyOffset(index);
        long stored = bodies.storedLength(index);
        try {
            long crc = mayRead ? fill.bodyCrc(p, filled, offset, stored) : fill.landedCrc(p, filled, offset, stored);
            if (crc == Fill.CRC_UNKNOWN) {
                return false;
            }
            if ((int) crc != bodies.crc32c(index)) {
                if (mayRead) {
                    notFromFill(index, p, "CRC32C mismatch");
                }
                return false;
            }
            Path copy = fill.sliceablePath(p, offset, stored);
            if (copy != null && sp.publishCopy(index, copy)) {
                fromRanges(responder, index, landed);
                responder.ok(NO_PATH);
                return true;
            }
        } catch (IOException e) {
            // unreadable fill file (abandoned meanwhile): the usual path decides
        }
        return false;
    }

    /**
     * A compressed regular file of a partition this node is still filling, or any file of one that has a decoded copy:
     * a slice of that copy can serve it (docs/slices.md, "compressed riders").
     */
    private boolean decodedRiderCanSlice(SlicePublisher sp, int index) {
        int p = bodies.partition(index);
        return p != BodyIndex.NO_BODY && FileModes.isRegular(table.mode(index))
                && (bodies.codec(index) != PartitionDescriptor.CODEC_RAW || sp.decoded(index)) && fill.filling(p);
    }

    /**
     * A reader of a file of a partition being filled, with a decoded copy (made now if needed), decodes it from its
     * ranges straight into that copy, once (its ranges go first, as for {@link #riderSlice}); its CRC32C is checked on
     * the decoded bytes and it is read as a slice from then on: no per-open copy into the cache, and the background
     * pass finds it done. Counted as a decompression when this open decoded it. False, not answered, when p gets no
     * decoded copy (no room, a raw rider named the fill file first), on a stall past half the fetch timeout, or when
     * the fill file's bytes did not check out: the usual path decides.
     */
    private boolean decodedRiderSlice(SlicePublisher sp, int index, LandedFirst.Landed landed,
            OpenTimer responder) {
        FileChannel filled = landed == null ? null : landed.channel();
        if (filled == null || !sp.riderCopy(bodies.partition(index))) {
            return false;
        }
        try {
            int got = sp.publishRider(index, filled);
            if (got == SlicePublisher.NOT_SLICE) {
                return false;
            }
            boolean decodedHere = got == SlicePublisher.DECODED_SLICE;
            responder.kind(decodedHere ? OpenKind.DECOMPRESSED : OpenKind.LOCAL,
                    decodedHere ? bodies.storedLength(index) : 0);
            responder.ok(NO_PATH);
            return true;
        } catch (IOException e) {
            return false;   // an interrupted wait for a decode of it by another open: the usual path decides
        }
    }

    /** Reads entry index's body from one source of its partition, decoding as the bytes arrive; checks its CRC. */
    private void fetchFrom(int source, int index, FileChannel out, OpenTimer timer, long deadline)
            throws IOException {
        int partition = bodies.partition(index);
        long offset = bodies.bodyOffset(index);
        long stored = bodies.storedLength(index);
        TimedChannel timed = new TimedChannel(out);
        long asked = System.nanoTime();
        if (bodies.codec(index) == PartitionDescriptor.CODEC_RAW) {
            CrcChannel checked = new CrcChannel(timed);
            fill.stream(source, partition, offset, stored, checked, deadline);
            checkCrc(index, checked.value(), sourceName(source));
        } else {
            // decoded as the bytes arrive: the compressed body is never stored (no scratch file, no second read)
            CRC32C crc = new CRC32C();
            Lz4StreamingDecoder decoder = Lz4StreamingDecoder.forThread().begin(stored, table.size(index), timed, crc);
            fill.stream(source, partition, offset, stored, decoder, deadline);
            decoder.finish();
            checkCrc(index, (int) crc.getValue(), sourceName(source) + " after decompression");
        }
        long first = timed.firstWrite() != 0 ? timed.firstWrite() : System.nanoTime();
        timer.stage(RemoteStage.FETCH_FIRST_BYTE, first - asked);
        timer.stage(RemoteStage.FETCH_REST, System.nanoTime() - first);
        timer.stage(RemoteStage.CACHE_WRITE, timed.writing());
    }

    private static String sourceName(int source) {
        return source == FillScheduler.HOME ? "from the dataset's home" : "from rank " + source;
    }

    /** Writes the raw bytes of entry index, stored at offset of in, to out, and checks their CRC32C. */
    private void decode(FileChannel in, long offset, int index, FileChannel out) throws IOException {
        long stored = bodies.storedLength(index);
        if (bodies.codec(index) == PartitionDescriptor.CODEC_RAW) {
            CrcChannel checked = new CrcChannel(out);
            long done = 0;
            while (done < stored) {
                long n = in.transferTo(offset + done, stored - done, checked);
                if (n <= 0) {
                    throw new IOException("body of entry " + index + " ends early");
                }
                done += n;
            }
            checkCrc(index, checked.value(), "in the local partition");
            return;
        }
        CRC32C crc = new CRC32C();
        Lz4Chunked.decodeTo(in, offset, stored, table.size(index), out, crc); // off-heap, per worker thread
        checkCrc(index, (int) crc.getValue(), "after decompression");
    }

    private void checkCrc(int index, int actual, String where) throws IOException {
        if (actual != bodies.crc32c(index)) {
            throw new IOException(String.format("CRC32C mismatch %s: %08x, expected %08x",
                    where, actual, bodies.crc32c(index)));
        }
    }
}
