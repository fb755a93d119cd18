package org.fanstore.runtime.metadata;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;

import org.fanstore.prep.format.FileModes;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.TableInfo;
import org.fanstore.prep.format.table.LandedTable;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.prep.format.table.MetadataTableDescriptor;
import org.fanstore.prep.format.table.TableChecksum;
import org.fanstore.prep.format.table.TableMapping;
import org.fanstore.runtime.world.MpiWorld;
import org.fanstore.runtime.broadcast.TableBroadcast;

/**
 * Puts the dataset's metadata table (prep built it) into this node's shared-memory directory, ready for the shim:
 * rank 0 reads {@code namespace.tbl} once, checks it against the manifest and broadcasts it ({@link TableBroadcast});
 * every other rank lands the bytes straight into its mapped copy, summing them as they land. Each node then fills
 * in its job area (rank, world, replicas, local root) and publishes the copy by a rename. Nothing is built per job.
 *
 * <p>A table that does not belong to its dataset (missing, truncated, altered, another dataset's, an older format)
 * is refused with one line naming the file and the fix; rank 0 sends that line to every rank, so the whole job
 * reports the same cause.
 */
public final class TableLanding {
    /** A job publishes one table and never replaces it, so its generation is a constant (the format forbids 0). */
    private static final long GENERATION = 1;
    private static final int READ_PIECE = 8 << 20;

    /** Milliseconds spent reading (rank 0) and transferring, for the ready line. */
    public record Timing(long readNanos, long transferNanos) {}

    private TableLanding() {
    }

    /**
     * Lands the table as {@code target} and opens it. {@code world} may be null for a job of one rank.
     *
     * @param readItself true when every rank reads the table from the shared FS itself instead of rank 0
     *                   broadcasting it
     */
    public static MetadataTable land(MpiWorld world, Path dataset, Manifest manifest, Path target, int rank, int size,
                                     int replicas, byte[] localRoot, boolean readItself, Duration timeout)
            throws IOException {
        TableInfo info = expected(dataset, manifest);
        FileChannel landed = null;
        boolean published = false;
        try {
            if (rank == 0 || readItself || world == null) {
                boolean broadcast = rank == 0 && !readItself && world != null && world.size() > 1;
                String problem = null;
                Reading reading = null;
                try {
                    reading = new Reading(dataset, manifest, info, target, localRoot.length);
                    landed = reading.landed;
                    problem = broadcast ? TableBroadcast.send(world, info.bytes(), reading, timeout)
                            : reading.readAll();
                } catch (IOException e) {
                    problem = e.getMessage();
                    if (broadcast && reading == null) {
                        TableBroadcast.fail(world, problem, timeout);
                    }
                } finally {
                    if (reading != null) {
                        reading.close();
                    }
                }
                if (problem != null) {
                    throw new IOException(problem);
                }
            } else {
                Landing receiver = new Landing(dataset, info, target, localRoot.length);
                try {
                    TableBroadcast.receive(world, receiver, timeout);
                } finally {
                    landed = receiver.landed;
                }
                if (receiver.sum.value() != info.crc32c() || receiver.sum.position() != info.bytes()) {
                    throw new IOException(String.format("rank %d: the metadata table of %s arrived damaged from rank"
                            + " %d (%d bytes with CRC32C %08x, %s says %d bytes with %08x)", rank, dataset, rank - 1,
                            receiver.sum.position(), receiver.sum.value(), Manifest.FILE_NAME, info.bytes(),
                            info.crc32c()));
                }
            }
            LandedTable.fillJobArea(landed, info.bytes(), rank, size, replicas, localRoot, GENERATION);
            LandedTable.publish(landed, target);
            published = true;
        } finally {
            if (!published) {
                if (landed != null) {
                    landed.close();
                }
                LandedTable.abandon(target);
            }
        }
        // the bytes matched the manifest's CRC32C (rank 0 as it read them, every other rank as they landed)
        return MetadataTable.openChecksummed(target);
    }

    /** The manifest's table record, or the one-line refusal of a dataset prepped before tables existed. */
    private static TableInfo expected(Path dataset, Manifest manifest) throws IOException {
        TableInfo info = manifest.table();
        if (info == null) {
            throw new IOException(olderFormat(dataset.toString()));
        }
        return info;
    }

    /** The one-line refusal of a dataset prepped before tables existed, naming it as the user gave it. */
    public static String olderFormat(String dataset) {
        return dataset + " was prepped by an older fanstore and has no " + TableInfo.FILE_NAME + ": run 'fanstore"
                + " upgrade " + dataset + "' once (it adds the table in place), or prep it again";
    }

    /**
     * The dataset's table read into a new landed file, in order, summed as it is read: whole ({@link #readAll})
     * or chunk by chunk while the chain sends what was read ({@link TableBroadcast.Source}). The bytes pass through
     * one buffer of {@code READ_PIECE} bytes (read, summed, written to the landed file at their offset), which also
     * serves the chain's chunks. The constructor checks what can be checked before any byte travels (present, a
     * regular file, the manifest's length, then the header of the first piece: version word and dataset id); the
     * CRC32C and the counts are judged once all was read.
     */
    private static final class Reading implements TableBroadcast.Source, AutoCloseable {
        private final Path dataset;
        private final Manifest manifest;
        private final TableInfo info;
        private final Path file;
        private final String fix;
        private final FileChannel in;
        private final TableChecksum sum = new TableChecksum();
        private final ByteBuffer buffer;
        final FileChannel landed;
        private final long landedLength;
        /** File offsets of buffer[0] and of the end of what it holds (everything before that end was read). */
        private long bufferStart;
        private long read;

        Reading(Path dataset, Manifest manifest, TableInfo info, Path target, int rootLength) throws IOException {
            this.dataset = dataset;
            this.manifest = manifest;
            this.info = info;
            this.file = dataset.resolve(info.fileName());
            this.fix = "run 'fanstore upgrade " + dataset + "' to rebuild it from the partitions, or prep again";
            if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
                throw new IOException(file + " is missing: " + fix);
            }
            if (!Files.isRegularFile(file)) {
                throw new IOException(file + " is not a regular file: " + fix);
            }
            in = FileChannel.open(file, StandardOpenOption.READ);
            FileChannel created = null;
            try {
                long length = in.size();
                if (length != info.bytes()) {
                    throw new IOException(String.format("%s is %d bytes, %s says %d (truncated or replaced): %s",
                            file, length, Manifest.FILE_NAME, info.bytes(), fix));
                }
                if (length < MetadataTableDescriptor.HEADER_LENGTH) {
                    throw new IOException(file + " is shorter than a table's header: " + fix);
                }
                // 8 MiB; tests that shrink the mapping windows shrink it too (to at least two chunks) to refill it
                int piece = (int) Math.min(READ_PIECE, Math.max(TableMapping.configuredStride(), 2 << 20));
                buffer = ByteBuffer.allocateDirect((int) Math.min(length, piece));
                created = LandedTable.create(target, length, rootLength);
                landed = created;
                landedLength = LandedTable.length(length, rootLength);
                readTo(buffer.capacity(), 0);
                checkHeader(file, buffer.duplicate().clear(), manifest, fix);
            } catch (IOException | RuntimeException e) {
                if (created != null) {
                    created.close();
                }
                in.close();
                throw e;
            }
        }

        @Override
        public ByteBuffer read(long offset, int length) throws IOException {
            readTo(offset + length, offset);
            ByteBuffer piece = buffer.duplicate();
            piece.limit((int) (offset + length - bufferStart)).position((int) (offset - bufferStart));
            return piece;   // valid until the next read: TableBroadcast copies it into a send buffer first
        }

        /** Reads the rest; returns the verdict. */
        String readAll() throws IOException {
            readTo(info.bytes(), info.bytes());
            return verdict();
        }

        @Override
        public String verdict() {
            if (sum.value() != info.crc32c()) {
                return String.format("%s has CRC32C %08x, %s says %08x (altered after prep): %s", file, sum.value(),
                        Manifest.FILE_NAME, info.crc32c(), fix);
            }
            try (TableMapping table = TableMapping.map(landed, FileChannel.MapMode.READ_ONLY, landedLength)) {
                return totalsProblem(dataset, table, manifest);
            } catch (IOException e) {
                return "cannot read back the landed metadata table of " + dataset + ": " + e.getMessage();
            }
        }

        /**
         * Reads up to {@code end} (at most one buffer past {@code keep}), keeping the bytes from {@code keep} on in
         * the buffer; each new byte is summed and written to the landed file once.
         */
        private void readTo(long end, long keep) throws IOException {
            while (read < end) {
                if (read - bufferStart == buffer.capacity()) {   // full: keep [keep, read), refill after it
                    ByteBuffer kept = buffer.duplicate();
                    kept.limit((int) (read - bufferStart)).position((int) (Math.min(keep, read) - bufferStart));
                    buffer.clear();
                    buffer.put(kept);
                    bufferStart = Math.min(keep, read);
                }
                ByteBuffer into = buffer.duplicate();
                into.limit((int) Math.min(buffer.capacity(), info.bytes() - bufferStart))
                        .position((int) (read - bufferStart));
                int n = in.read(into, read);
                if (n < 0) {
                    throw new IOException(file + " ended at byte " + read + " of " + info.bytes() + ": " + fix);
                }
                ByteBuffer fresh = buffer.duplicate();
                fresh.limit((int) (read - bufferStart) + n).position((int) (read - bufferStart));
                sum.update(fresh);
                LandedTable.write(landed, fresh, read);
                read += n;
            }
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    /** The version word and the dataset identity, for a message more useful than a CRC mismatch. */
    private static void checkHeader(Path file, ByteBuffer table, Manifest manifest, String fix) throws IOException {
        ByteBuffer b = table.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int version = b.getInt(MetadataTableDescriptor.VERSION_OFFSET);
        if (version != MetadataTableDescriptor.VERSION) {
            throw new IOException(file + " has version word " + MetadataTableDescriptor.describeVersion(version)
                    + ", this fanstore reads "
                    + MetadataTableDescriptor.describeVersion(MetadataTableDescriptor.VERSION)
                    + ": " + fix);
        }
        long id = b.getLong(MetadataTableDescriptor.DATASET_ID_OFFSET);
        if (id != manifest.datasetId()) {
            throw new IOException(String.format("%s belongs to another dataset (id %016x, this one is %016x): %s",
                    file, id, manifest.datasetId(), fix));
        }
    }

    /**
     * The manifest's totals against what the table holds: the ready line and every consumer of the counts would
     * otherwise repeat whatever the manifest claims. One pass over the entries' modes, on the rank that read the
     * table (every rank lands the same bytes).
     */
    private static String totalsProblem(Path dataset, TableMapping b, Manifest manifest) {
        long entries = b.getLong(MetadataTableDescriptor.ENTRY_COUNT_OFFSET);
        long at = b.getLong(MetadataTableDescriptor.ENTRIES_OFFSET_OFFSET);
        long attributesAt = b.getLong(MetadataTableDescriptor.ATTRIBUTES_OFFSET_OFFSET);
        long[] uses = new long[(int) Math.min(b.getLong(MetadataTableDescriptor.ATTRIBUTE_COUNT_OFFSET),
                MetadataTableDescriptor.MAX_ATTRIBUTES)];
        for (long i = 0; i < entries; i++, at += MetadataTableDescriptor.ENTRY_LENGTH) {
            int attribute = b.getInt(at + MetadataTableDescriptor.ENTRY_ATTRIBUTE_OFFSET - 2) >>> 16;
            if (attribute >= uses.length) {
                return dataset.resolve(TableInfo.FILE_NAME) + ": entry " + i + " has attribute " + attribute
                        + " of " + uses.length + ": the dataset was altered after prep; run fanstore verify " + dataset;
            }
            uses[attribute]++;
        }
        long files = 0;
        long dirs = -1;   // the root "" is the mount, not part of the dataset
        long symlinks = 0;
        for (int a = 0; a < uses.length; a++) {
            int mode = b.getInt(attributesAt + (long) a * MetadataTableDescriptor.ATTRIBUTE_LENGTH
                    + MetadataTableDescriptor.ATTRIBUTE_MODE_OFFSET);
            if (FileModes.isDirectory(mode)) {
                dirs += uses[a];
            } else if (FileModes.isRegular(mode)) {
                files += uses[a];
            } else {
                symlinks += uses[a];
            }
        }
        if (files != manifest.files() || dirs != manifest.dirs() || symlinks != manifest.symlinks()) {
            return String.format("%s in %s says %d files, %d directories and %d symlinks, the table holds %d, %d and"
                            + " %d: the dataset was altered after prep; run fanstore verify %s", Manifest.FILE_NAME,
                    dataset, manifest.files(), manifest.dirs(), manifest.symlinks(), files, dirs, symlinks, dataset);
        }
        return null;
    }

    /** A receiving rank's mapped copy, created when the length is known, summed as chunks land. */
    private static final class Landing implements TableBroadcast.Receiver {
        private final Path dataset;
        private final TableInfo info;
        private final Path target;
        private final int rootLength;
        private final TableChecksum sum = new TableChecksum();
        private FileChannel landed;

        Landing(Path dataset, TableInfo info, Path target, int rootLength) {
            this.dataset = dataset;
            this.info = info;
            this.target = target;
            this.rootLength = rootLength;
        }

        @Override
        public void begin(long length) throws IOException {
            if (length != info.bytes()) {
                throw new IOException("rank 0 sends a metadata table of " + length + " bytes, " + dataset.resolve(
                        Manifest.FILE_NAME) + " says " + info.bytes() + ": do all nodes see the same dataset?");
            }
            landed = LandedTable.create(target, length, rootLength);
        }

        @Override
        public void chunk(ByteBuffer data, long offset) throws IOException {
            sum.update(data);
            LandedTable.write(landed, data, offset);
        }
    }
}
