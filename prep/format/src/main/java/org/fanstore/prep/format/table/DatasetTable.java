package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.table.MetadataTableDescriptor.FLAG_COMPRESSED;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.FLAG_UNPACKABLE;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.NO_PARTITION;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.nio.file.Path;
import java.util.List;

import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.PartitionReader;
import org.fanstore.prep.format.TableInfo;

/**
 * Builds a dataset's metadata table from its partitions' file tables (never their bodies, but symlink targets),
 * once: at the end of {@code fanstore prep}, or by {@code fanstore upgrade} for a dataset prepped before tables
 * existed. Keys are {@code <dataset name>/<path>}; the dataset root is the key {@code <name>}.
 */
public final class DatasetTable {
    private DatasetTable() {
    }

    /**
     * Writes {@code datasetDir/namespace.tbl} for the partitions {@code manifest} lists.
     *
     * @return the manifest with its table record (not written: the caller writes it)
     */
    public static Manifest write(final Path datasetDir, final Manifest manifest) throws IOException {
        final NamespaceColumns entries = new NamespaceColumns((int)Math.min(Integer.MAX_VALUE - 8,
            manifest.files() + manifest.dirs() + manifest.symlinks() + 2), manifest.regularPartitions().size(),
            manifest.broadcastPartitions().size());
        for (final PartitionInfo info : manifest.partitions()) {
            add(entries, manifest.nameBytes(), datasetDir, info, null);
        }
        return write(datasetDir, entries, manifest);
    }

    /**
     * Adds the entries of partition {@code info} to {@code entries}, from its table as its writer returned it
     * ({@code given}; null to read it from the file): prep's way, as each partition is written, so that no
     * partition's entry objects outlive it. A partition that holds symlinks is read back (their targets are bodies).
     *
     * @param name the dataset's name: keys are {@code <name>/<path>}
     * @throws IllegalArgumentException naming the key, for an entry the table cannot hold
     */
    public static void add(final NamespaceColumns entries, final byte[] name, final Path datasetDir,
        final PartitionInfo info, final List<PartitionEntry> given) throws IOException {
        final int partition = info.broadcast() ? -1 - info.index() : info.index();
        if (given != null && given.stream().noneMatch(PartitionEntry::isSymlink)) {
            for (final PartitionEntry e : given) {
                add(entries, keyOf(name, e.path()), e, partition, null);
            }
            return;
        }
        try (PartitionReader reader = PartitionReader.open(datasetDir.resolve(info.fileName()))) {
            for (final PartitionEntry e : reader.entries()) {
                add(entries, keyOf(name, e.path()), e, partition, e.isSymlink() ? reader.readRaw(e) : null);
            }
        }
    }

    /**
     * Writes {@code datasetDir/namespace.tbl} from every partition's entries, added with
     * {@link #add(NamespaceColumns, byte[], Path, PartitionInfo, List)} (consumed: reordered and added to).
     *
     * @return the manifest with its table record (not written: the caller writes it)
     */
    public static Manifest write(final Path datasetDir, final NamespaceColumns entries, final Manifest manifest)
        throws IOException {
        if (entries.partitions != manifest.regularPartitions().size() ||
            entries.broadcastPartitions != manifest.broadcastPartitions().size()) {
            throw new IllegalStateException("namespace built for " + entries.partitions + " + "
                + entries.broadcastPartitions + " partitions, manifest lists " + manifest.regularPartitions().size()
                + " + " + manifest.broadcastPartitions().size());
        }
        final Path target = datasetDir.resolve(TableInfo.FILE_NAME);
        MetadataTableWriter.write(target, entries, manifest.datasetId(), MetadataTableDescriptor.DATASET_ST_DEV);
        // The writer's own output: its header is read back, not every entry validated again (verify does that).
        final ByteBuffer header = ByteBuffer.allocate(MetadataTableDescriptor.HEADER_LENGTH)
            .order(ByteOrder.LITTLE_ENDIAN);
        try (FileChannel in = FileChannel.open(target, StandardOpenOption.READ)) {
            for (int n = 0; header.hasRemaining() && n >= 0; ) {
                n = in.read(header, header.position());
            }
        }
        return manifest.withTable(new TableInfo(TableInfo.FILE_NAME,
            header.getLong(MetadataTableDescriptor.TABLE_LENGTH_OFFSET),
            header.getInt(MetadataTableDescriptor.CRC_OFFSET)));
    }

    /** The table entry for partition entry {@code e} under {@code key}. */
    public static NamespaceEntry entryOf(final byte[] key, final PartitionEntry e, final int partition,
        final byte[] link) {
        if (!e.isFile()) {
            return new NamespaceEntry(key, e.mode(), 0, e.mtimeSec(), e.mtimeNsec(), e.uid(), e.gid(), 0,
                NO_PARTITION, e.isSymlink() ? link : null, 0, 0, 0, 0);
        }
        return new NamespaceEntry(key, e.mode(), e.rawLength(), e.mtimeSec(), e.mtimeNsec(), e.uid(), e.gid(),
            flagsOf(key, e), partition, null, e.bodyOffset(), e.storedLength(), e.crc32c(), e.codec());
    }

    /** Adds what {@link #entryOf} makes to {@code entries}, without making the entry object. */
    private static void add(final NamespaceColumns entries, final byte[] key, final PartitionEntry e,
        final int partition, final byte[] link) {
        if (!e.isFile()) {
            entries.add(key, e.mode(), 0, e.mtimeSec(), e.mtimeNsec(), e.uid(), e.gid(), 0, NO_PARTITION,
                e.isSymlink() ? link : null, 0, 0, 0);
            return;
        }
        entries.add(key, e.mode(), e.rawLength(), e.mtimeSec(), e.mtimeNsec(), e.uid(), e.gid(), flagsOf(key, e),
            partition, null, e.bodyOffset(), e.storedLength(), e.crc32c());
    }

    private static int flagsOf(final byte[] key, final PartitionEntry e) {
        if (e.codec() != PartitionDescriptor.CODEC_RAW) {
            return FLAG_COMPRESSED;
        }
        return LocalNames.unpackable(key) ? FLAG_UNPACKABLE : 0;
    }

    /** {@code <name>/<path>}, or {@code <name>} for the dataset root (the empty path). */
    public static byte[] keyOf(final byte[] name, final byte[] path) {
        if (path.length == 0) {
            return name.clone();
        }
        final byte[] key = new byte[name.length + 1 + path.length];
        System.arraycopy(name, 0, key, 0, name.length);
        key[name.length] = '/';
        System.arraycopy(path, 0, key, name.length + 1, path.length);
        return key;
    }
}
