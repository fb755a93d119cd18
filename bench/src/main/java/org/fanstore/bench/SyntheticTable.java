package org.fanstore.bench;

import static org.fanstore.prep.format.table.MetadataTableDescriptor.DATASET_ST_DEV;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.NO_PARTITION;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.TableInfo;
import org.fanstore.prep.format.table.DatasetTable;
import org.fanstore.prep.format.table.Fnv1a64;
import org.fanstore.prep.format.table.NamespaceEntry;
import org.fanstore.prep.format.table.TableSink;

/**
 * The synthetic dataset's metadata table, streamed: the tree is regular (the dataset root, train/, DIRS directories
 * in name order, each one's files in name order), so every entry's breadth-first index, parent, names base and name
 * offset are computed, and the entries go straight into a {@link TableSink} (the format's byte level, shared with
 * prep's writer) as each partition is written. Held: the bucket array (B x 4 bytes) and one long per directory,
 * instead of prep's ~450 bytes per entry. Directories are placed in the buckets as they are written, files at the
 * end in entry order (a second pass over their names). Entry indices: 0 the root "", 1 the dataset root, 2 train/,
 * 3 + d directory d, 3 + DIRS + (its number) file i. Byte-identical to prep's table for the same partitions
 * ({@code SyntheticDatasetTest}).
 */
final class SyntheticTable implements AutoCloseable {
    private static final int DIRECTORY_ATTRIBUTE = 0;
    private static final int FILE_ATTRIBUTE = 1;

    private final TableSink sink;
    private final byte[] name;
    private final long files;
    private final long dirs;
    private final int partitions;
    /** Per directory: where its files' stored names start (its names base), and one past the last. */
    private final long[] namesBase;
    /** Per directory: whether its name extends train/'s (then its files store their whole names). */
    private final boolean[] dirExtends;

    private SyntheticTable(final TableSink sink, final byte[] name, final long files, final long dirs,
        final int partitions, final long[] namesBase, final boolean[] dirExtends) {
        this.sink = sink;
        this.name = name;
        this.files = files;
        this.dirs = dirs;
        this.partitions = partitions;
        this.namesBase = namesBase;
        this.dirExtends = dirExtends;
    }

    /** Where a key's stored name starts: its last component, less its parent's name when it extends it. */
    private static int storedFrom(final byte[] parentKey, final int parentFrom, final boolean parentStored,
        final byte[] key) {
        final int nameFrom = parentKey.length + 1;
        return parentStored && TableSink.extendsName(parentKey, parentFrom, key, nameFrom) ?
            nameFrom + parentKey.length - parentFrom : nameFrom;
    }

    /** Creates the table and writes everything but the files: the root, the dataset root, train/, directories. */
    static SyntheticTable create(final Path target, final byte[] name, final long files, final long dirs,
        final int partitions, final long datasetId) throws IOException {
        if (dirs < 1 || dirs > Integer.MAX_VALUE - 4 || files < 1) {
            throw new IllegalArgumentException("synthetic: need 1 <= DIRS < 2^31 - 4 and FILES >= 1");
        }
        final byte[] train = DatasetTable.keyOf(name, SyntheticDataset.dirPath(-1));
        // the dataset root (parent: the mount root) stores its whole name; train/ may extend it
        final int trainFrom = storedFrom(name, 0, true, train);
        final boolean trainExtends = trainFrom != name.length + 1;
        final long[] base = new long[(int)dirs + 1];
        final boolean[] dirExtends = new boolean[(int)dirs];
        long at = name.length + train.length - trainFrom;   // root's child, then train/ under the dataset root
        for (int d = 0; d < dirs; d++) {
            final byte[] key = DatasetTable.keyOf(name, SyntheticDataset.dirPath(d));
            final int from = storedFrom(train, name.length + 1, !trainExtends, key);
            dirExtends[d] = from != train.length + 1;
            at += key.length - from;
        }
        for (int d = 0; d < dirs; d++) {
            base[d] = at;
            final byte[] dirKey = DatasetTable.keyOf(name, SyntheticDataset.dirPath(d));
            for (long i = SyntheticDataset.first(d, files, dirs); i < SyntheticDataset.first(d + 1, files, dirs); i++) {
                final byte[] key = DatasetTable.keyOf(name, SyntheticDataset.filePath(d, i));
                at += key.length - storedFrom(dirKey, train.length + 1, !dirExtends[d], key);   // "<name>/train/"
            }
        }
        base[(int)dirs] = at;
        final long entries = 3 + dirs + files;
        final int[] attributes = {
            NamespaceEntry.DEFAULT_DIRECTORY_MODE, 0, 0, SyntheticDataset.FILE_MODE, 0, 0};
        final TableSink sink = TableSink.create(target, entries, attributes, 2, at, datasetId, partitions, 0,
            DATASET_ST_DEV);
        final SyntheticTable table = new SyntheticTable(sink, name, files, dirs, partitions, base, dirExtends);
        table.directories(train, trainFrom, trainExtends);
        return table;
    }

    private void directories(final byte[] train, final int trainFrom, final boolean trainExtends) {
        final int d0 = 3;
        final long mtime = SyntheticDataset.MTIME;
        final NamespaceEntry root = new NamespaceEntry(new byte[0], NamespaceEntry.DEFAULT_DIRECTORY_MODE, 0, mtime,
            0, 0, 0, 0, NO_PARTITION, null, 0, 0, 0, 0);
        sink.entry(0, root, DIRECTORY_ATTRIBUTE, 0, 0, 0, false, 0, 1, 1);
        sink.bucket(Fnv1a64.hash(root.key()), 0);
        sink.entry(1, dir(name), DIRECTORY_ATTRIBUTE, 0, 0, name.length, false, name.length, 2, 1);
        sink.name(0, name, 0, name.length);
        sink.bucket(Fnv1a64.hash(name), 1);
        final int trainStored = train.length - trainFrom;
        sink.entry(2, dir(train), DIRECTORY_ATTRIBUTE, 1, 0, trainStored, trainExtends, name.length + trainStored,
            d0, (int)dirs);
        sink.name(name.length, train, trainFrom, trainStored);
        sink.bucket(Fnv1a64.hash(train), 2);
        long at = name.length + trainStored;
        final long dirsBase = at;
        for (int d = 0; d < dirs; d++) {
            final byte[] key = DatasetTable.keyOf(name, SyntheticDataset.dirPath(d));
            final int from = storedFrom(train, name.length + 1, !trainExtends, key);
            final long first = SyntheticDataset.first(d, files, dirs);
            final int count = (int)(SyntheticDataset.first(d + 1, files, dirs) - first);
            sink.entry(d0 + d, dir(key), DIRECTORY_ATTRIBUTE, 2, (int)(at - dirsBase), key.length - from,
                dirExtends[d], count > 0 ? namesBase[d] : 0, (int)(d0 + dirs + first), count);
            sink.name(at, key, from, key.length - from);
            sink.bucket(Fnv1a64.hash(key), d0 + d);
            at += key.length - from;
        }
    }

    private static NamespaceEntry dir(final byte[] key) {
        return DatasetTable.entryOf(key, SyntheticDataset.dir(new byte[0]), NO_PARTITION, null);
    }

    /** Writes the files of partition {@code p} from its table as its writer returned it (body offsets included). */
    void partition(final int p, final List<PartitionEntry> table) {
        int next = p == 0 ? 2 : 0;   // partition 0 begins with the dataset root and train/
        for (long d = p; d < dirs; d += partitions) {
            next++;   // the directory's own entry
            final byte[] dirKey = DatasetTable.keyOf(name, SyntheticDataset.dirPath(d));
            long offset = 0;
            for (long i = SyntheticDataset.first(d, files, dirs); i < SyntheticDataset.first(d + 1, files, dirs); i++) {
                final PartitionEntry e = table.get(next++);
                final byte[] key = DatasetTable.keyOf(name, e.path());
                final int from = storedFrom(dirKey, name.length + 7, !dirExtends[(int)d], key);
                final int k = (int)(3 + dirs + i);
                sink.entry(k, DatasetTable.entryOf(key, e, p, null), FILE_ATTRIBUTE, (int)(3 + d), (int)offset,
                    key.length - from, from != dirKey.length + 1, 0, 0, 0);
                sink.name(namesBase[(int)d] + offset, key, from, key.length - from);
                offset += key.length - from;
            }
        }
    }

    /**
     * Places the files in the bucket array, in entry order as prep's writer does (which entry of a probe run takes
     * which bucket depends on the order), then writes buckets and CRC and renames the table into place.
     */
    TableInfo publish() throws IOException {
        for (long d = 0; d < dirs; d++) {
            for (long i = SyntheticDataset.first(d, files, dirs); i < SyntheticDataset.first(d + 1, files, dirs); i++) {
                sink.bucket(Fnv1a64.hash(DatasetTable.keyOf(name, SyntheticDataset.filePath(d, i))),
                    (int)(3 + dirs + i));
            }
        }
        final long bytes = sink.publish();
        return new TableInfo(TableInfo.FILE_NAME, bytes, sink.crc());
    }

    @Override
    public void close() throws IOException {
        sink.close();
    }
}
