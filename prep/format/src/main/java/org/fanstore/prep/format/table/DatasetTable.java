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
import java.util.ArrayList;
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
        return write(datasetDir, null, manifest);
    }

    /**
     * As {@link #write(Path, Manifest)}, from the partitions' tables as their writer returned them ({@code tables},
     * in the manifest's partition order; null to read them from the files): prep's way, with no second read of
     * its own output but for the partitions that hold symlinks (their targets are bodies). {@code tables} is
     * consumed: each partition's list is replaced by null once converted, so a partition's entries and their
     * table entries are not both held for the whole namespace.
     */
    public static Manifest write(final Path datasetDir, final List<List<PartitionEntry>> tables,
        final Manifest manifest) throws IOException {
        final byte[] name = manifest.nameBytes();
        final List<NamespaceEntry> entries = new ArrayList<>((int)Math.min(Integer.MAX_VALUE - 8,
            manifest.files() + manifest.dirs() + manifest.symlinks() + 1));
        for (int k = 0; k < manifest.partitions().size(); k++) {
            final PartitionInfo info = manifest.partitions().get(k);
            final int partition = info.broadcast() ? -1 - info.index() : info.index();
            final List<PartitionEntry> given = tables == null ? null : tables.get(k);
            if (given != null && given.stream().noneMatch(PartitionEntry::isSymlink)) {
                for (final PartitionEntry e : given) {
                    entries.add(entryOf(keyOf(name, e.path()), e, partition, null));
                }
                tables.set(k, null);
                continue;
            }
            if (given != null) {
                tables.set(k, null);
            }
            try (PartitionReader reader = PartitionReader.open(datasetDir.resolve(info.fileName()))) {
                for (final PartitionEntry e : reader.entries()) {
                    entries.add(entryOf(keyOf(name, e.path()), e, partition, e.isSymlink() ? reader.readRaw(e) : null));
                }
            }
        }
        final Path target = datasetDir.resolve(TableInfo.FILE_NAME);
        MetadataTableWriter.write(target, entries, manifest.datasetId(), manifest.regularPartitions().size(),
            manifest.broadcastPartitions().size(), MetadataTableDescriptor.DATASET_ST_DEV);
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
        int flags = 0;
        if (e.codec() != PartitionDescriptor.CODEC_RAW) {
            flags |= FLAG_COMPRESSED;
        } else if (LocalNames.unpackable(key)) {
            flags |= FLAG_UNPACKABLE;
        }
        return new NamespaceEntry(key, e.mode(), e.rawLength(), e.mtimeSec(), e.mtimeNsec(), e.uid(), e.gid(), flags,
            partition, null, e.bodyOffset(), e.storedLength(), e.crc32c(), e.codec());
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
