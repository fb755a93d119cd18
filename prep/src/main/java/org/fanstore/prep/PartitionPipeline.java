package org.fanstore.prep;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.zip.CRC32C;

import org.fanstore.prep.format.Compression;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.PartitionWriter;

/**
 * Writes the planned partitions one after another. Worker threads read (and compress) small files ahead of
 * the writer, many per task ({@link ReadBatch}), bounded by {@link #AHEAD_BYTES} and {@link #AHEAD_ENTRIES};
 * the single writer consumes their results strictly in table order, so the output does not depend on the
 * number of threads. Large files are streamed by the writer itself while the workers keep reading ahead.
 * Each finished partition is synced on a thread of its own while the writer moves on to the next one: an
 * fsync can take a second on a busy disk, and on the readers' pool it would hold a reader, and the reads
 * queued behind it, for that long.
 */
final class PartitionPipeline {
    private static final long AHEAD_BYTES = 32L << 20;
    private static final int AHEAD_ENTRIES = 4096;
    /** Slots per worker task ({@link ReadBatch}), fewer when their small files reach {@link #BATCH_BYTES}. */
    private static final int BATCH_SLOTS = 64;
    private static final long BATCH_BYTES = 1L << 20;

    private final Path dir;
    private final int threads;
    private final BodyEncoder encoder;
    /** The tables of the partitions written so far, kept for the metadata table (no second read of them). */
    private final List<List<PartitionEntry>> tables = new ArrayList<>();
    private final PrepProgress progress;

    private final List<Future<?>> syncs = new ArrayList<>();
    private SourceEntry[] slots;
    /** The batch reading each slot's file (null where the writer streams it or there is no body). */
    private ReadBatch[] batches;
    private int submitted;
    private long aheadBytes;

    private long files;
    private long dirs;
    private long symlinks;
    private long rawBytes;
    private long storedBytes;

    private final SourceFiles sources;

    PartitionPipeline(final Path dir, final Compression compression, final int threads, final PrepProgress progress,
        final SourceFiles sources) {
        this.dir = dir;
        this.threads = threads;
        this.sources = sources;
        this.encoder = new BodyEncoder(compression, sources);
        this.progress = progress;
    }

    /** Each written partition's table, in the order of the infos writeAll returns (regular, then broadcast). */
    List<List<PartitionEntry>> tables() {
        return tables;
    }

    /**
     * Writes every partition of {@code plan}, emptying its lists: each entry is then held by {@link #slots} alone,
     * until it is written, so the walk's objects do not outlive their partition (README "Memory").
     */
    List<PartitionInfo> writeAll(final PartitionPlan plan) throws IOException, PrepException {
        final List<List<SourceEntry>> partitions = new ArrayList<>(plan.regular());
        partitions.addAll(plan.broadcast());
        final int[] counts = new int[partitions.size()];
        final long[] tableLengths = new long[partitions.size()];
        int total = 0;
        for (int k = 0; k < partitions.size(); k++) {
            counts[k] = partitions.get(k).size();
            tableLengths[k] = PartitionPlan.tableLength(partitions.get(k));
            total = Math.addExact(total, counts[k]);
        }
        slots = new SourceEntry[total];
        long totalFiles = 0;
        long totalBytes = 0;
        int at = 0;
        for (final List<SourceEntry> partition : partitions) {
            for (final SourceEntry e : partition) {
                slots[at++] = e;
                if (!e.isDir()) {
                    totalFiles++;
                    totalBytes += e.size();
                }
            }
            partition.clear();
        }
        batches = new ReadBatch[slots.length];
        progress.start(totalFiles, totalBytes);

        final ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
            final Thread t = new Thread(r, "fanstore-prep-reader");
            t.setDaemon(true);
            return t;
        });
        final ExecutorService syncer = Executors.newSingleThreadExecutor(r -> {
            final Thread t = new Thread(r, "fanstore-prep-sync");
            t.setDaemon(true);
            return t;
        });
        try {
            final List<PartitionInfo> infos = new ArrayList<>();
            final int regular = plan.regular().size();
            int next = 0;
            for (int k = 0; k < partitions.size(); k++) {
                final boolean broadcast = k >= regular;
                infos.add(write(pool, syncer, counts[k], tableLengths[k], broadcast ? k - regular : k, broadcast,
                    next));
                next += counts[k];
            }
            for (final Future<?> sync : syncs) {
                await(sync);
            }
            slots = null; // 8 bytes per entry, all null by now, not to be held through the table
            batches = null;
            return infos;
        } finally {
            pool.shutdownNow();
            syncer.shutdownNow();
        }
    }

    private PartitionInfo write(final ExecutorService pool, final ExecutorService syncer, final int count,
        final long tableLength, final int index, final boolean broadcast, final int firstSlot)
        throws IOException, PrepException {
        final String fileName = broadcast ? PartitionDescriptor.broadcastFileName(index) :
            PartitionDescriptor.regularFileName(index);
        final PartitionWriter.Written written;
        try (PartitionWriter writer = PartitionWriter.create(dir.resolve(fileName), index, broadcast,
            count, tableLength)) {
            for (int i = 0; i < count; i++) {
                final int slot = firstSlot + i;
                submitAhead(pool, slot);
                writeEntry(writer, slot);
            }
            written = writer.finish();
        }
        final Path file = dir.resolve(fileName);
        syncs.add(syncer.submit(() -> {
            PartitionWriter.sync(file);
            return null;
        }));
        tables.add(written.table());
        return new PartitionInfo(index, fileName, written.fileBytes(), written.crc32c(), written.entries(),
            broadcast);
    }

    private void writeEntry(final PartitionWriter writer, final int slot) throws IOException, PrepException {
        final SourceEntry e = slots[slot];
        slots[slot] = null;
        if (e.isDir()) {
            writer.addDirectory(e.toEntry());
            dirs++;
            return;
        }
        if (e.isSymlink()) {
            final CRC32C crc = new CRC32C();
            crc.update(e.linkTarget());
            writer.addBody(e.toEntry(), PartitionDescriptor.CODEC_RAW, e.linkTarget().length, (int)crc.getValue(),
                e.linkTarget(), e.linkTarget().length);
            symlinks++;
            storedBytes += e.linkTarget().length;
            progress.advance(e.size());
            return;
        }
        final long raw;
        final long stored;
        if (batches[slot] != null) {
            final BodyEncoder.EncodedBody body = await(batches[slot], slot, e);
            batches[slot] = null;
            aheadBytes -= e.size();
            writer.addBody(e.toEntry(), body.codec(), body.rawLength(), body.rawCrc(), body.stored(),
                body.storedLength());
            encoder.recycle(body);
            raw = body.rawLength();
            stored = body.storedLength();
        } else {
            final BodyEncoder.Streamed body;
            try {
                body = encoder.stream(e, writer, e.toEntry());
            } catch (final NoSuchFileException | AccessDeniedException failure) {
                throw readFailure(e, failure);
            }
            // Any other IOException may come from the partition being written (e.g. a full disk): it names its
            // own file, so it is passed on rather than blamed on the source file.
            raw = body.rawLength();
            stored = body.storedLength();
        }
        files++;
        rawBytes += raw;
        storedBytes += stored;
        progress.advance(e.size());
    }

    /**
     * Hands small files from {@code slot} on to the workers, a whole batch at a time, as far ahead as the budgets
     * allow (they may be overshot by one batch). Batches are only cut short by their byte limit or the last slot,
     * so in the steady state, where the writer frees budget one entry at a time, tasks still carry many files.
     */
    private void submitAhead(final ExecutorService pool, final int slot) {
        submitted = Math.max(submitted, slot);
        while (submitted < slots.length && submitted - slot < AHEAD_ENTRIES &&
            (aheadBytes < AHEAD_BYTES || submitted == slot)) {
            final int first = submitted;
            final int end = Math.min(slots.length, first + BATCH_SLOTS);
            final SourceEntry[] files = new SourceEntry[end - first];
            long batchBytes = 0;
            int batchFiles = 0;
            int last = first;
            for (; last < end && batchBytes < BATCH_BYTES; last++) {
                final SourceEntry e = slots[last];
                if (e.isFile() && encoder.readsWhole(e.size())) {
                    files[last - first] = e;
                    batchBytes += e.size();
                    batchFiles++;
                }
            }
            submitted = last;
            if (batchFiles == 0) {
                continue;
            }
            final ReadBatch batch = new ReadBatch(encoder, first, files);
            batch.submitTo(pool);
            for (int s = first; s < last; s++) {
                if (files[s - first] != null) {
                    batches[s] = batch;
                }
            }
            aheadBytes += batchBytes;
        }
    }

    private BodyEncoder.EncodedBody await(final ReadBatch batch, final int slot, final SourceEntry e)
        throws IOException, PrepException {
        try {
            return batch.take(slot);
        } catch (final IOException failure) {
            throw readFailure(e, failure);
        } catch (final InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while packing " + sources.describe(e));
        } catch (final ExecutionException failed) {
            if (failed.getCause() instanceof IOException io) {
                throw readFailure(e, io);
            }
            throw new IllegalStateException("packing " + sources.describe(e) + " failed", failed.getCause());
        }
    }

    private static void await(final Future<?> sync) throws IOException {
        try {
            sync.get();
        } catch (final InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while syncing partitions");
        } catch (final ExecutionException failed) {
            if (failed.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IllegalStateException("syncing a partition failed", failed.getCause());
        }
    }

    private PrepException readFailure(final SourceEntry e, final IOException failure) {
        if (failure instanceof NoSuchFileException) {
            return new PrepException("file " + sources.describe(e) + " disappeared while prep was running: " +
                "prep a dataset " +
                "nobody is changing");
        }
        if (failure instanceof AccessDeniedException) {
            return new PrepException("cannot read file " + sources.describe(e) + ": fix its permissions or pass " +
                "--skip-unreadable to leave it out");
        }
        if (failure instanceof org.fanstore.prep.store.StoreException) {
            return new PrepException(failure.getMessage(), failure);
        }
        return new PrepException("cannot read file " + sources.describe(e) + ": " + failure.getMessage(), failure);
    }

    long files() {
        return files;
    }

    long dirs() {
        return dirs;
    }

    long symlinks() {
        return symlinks;
    }

    long rawBytes() {
        return rawBytes;
    }

    long storedBytes() {
        return storedBytes;
    }
}
