package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.FileModes.isDirectory;
import static org.fanstore.prep.format.FileModes.isSymlink;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Writes a dataset's namespace as its metadata table (format 3: README.md beside this class). The table is built in
 * {@code <target>.tmp} (mode 0644, like the partitions) through a mapping of exactly its final length, then renamed
 * over the target, so a reader sees either the old table or the whole new one. Directories that no entry names are
 * added as 040755 directories carrying the mtime, uid and gid of their newest child (deterministic, and what a user
 * expects from {@code ls -l}); the root "" is added the same way when absent.
 */
public final class MetadataTableWriter {
    private MetadataTableWriter() {
    }

    /**
     * Writes a dataset's table (job area zero, CRC filled in).
     *
     * @param datasetId  the dataset's identity ({@code Manifest.datasetId()})
     * @param partitions regular partitions; entries' partitions must lie in range
     * @return bytes written
     * @throws IllegalArgumentException for a namespace the format cannot hold (duplicate or malformed keys, a
     *                                  file used as a directory, a partition out of range), naming the offending key
     */
    public static long write(
        final Path target, final List<NamespaceEntry> entries, final long datasetId, final int partitions,
        final int broadcastPartitions, final int stDev) throws IOException {
        return write(target, NamespaceColumns.of(entries, partitions, broadcastPartitions), datasetId, stDev);
    }

    /**
     * As {@link #write(Path, List, long, int, int, int)}, from a namespace in columns (its partition counts are the
     * table's). {@code entries} is consumed: its columns are reordered and added to.
     */
    public static long write(final Path target, final NamespaceColumns entries, final long datasetId,
        final int stDev) throws IOException {
        final BreadthFirstNamespace bf = new BreadthFirstNamespace(SortedNamespace.of(entries));
        final NamespaceColumns c = entries;
        final int n = bf.order.length;
        try (TableSink sink = TableSink.create(target, n, bf.attributes, bf.attributeCount, bf.namesLength,
            datasetId, c.partitions, c.broadcastPartitions, stDev)) {
            for (int k = 0; k < n; k++) {
                final int s = bf.sorted(k);
                final int mode = c.mode(s);
                final int count = isDirectory(mode) ? bf.ns.childCount[s] : 0;
                sink.entry(k, mode, c.size[s], c.mtime[s], c.tableFlags(s), c.partition[s], c.bodyOffset[s], c.crc[s],
                    c.storedLength[s], bf.attribute[k], bf.parent[k], bf.nameOffset[k], bf.storedLength(k),
                    bf.extendsParent[k], bf.namesBase[k], bf.firstChild[k], count);
                sink.bucket(bf.hash(k), k);
            }
            writeNames(sink, bf);
            return sink.publish();
        }
    }

    /** Each directory's children's stored names (and symlink targets), directories in entry order. */
    private static void writeNames(final TableSink sink, final BreadthFirstNamespace bf) {
        final NamespaceColumns c = bf.ns.entries;
        for (int k = 1; k < bf.order.length; k++) {
            final int s = bf.sorted(k);
            final long at = bf.namesBase[bf.parent[k]] + (bf.nameOffset[k] & 0xffffffffL);
            final int from = bf.storedFrom[k];
            final int length = c.keyLength[s];
            // The key, then a symlink's target (its size), lie together in the arena.
            final int tail = isSymlink(c.mode(s)) ? (int)c.size[s] : 0;
            sink.name(at, c.chunk(s), c.from(s) + from, length - from + tail);
        }
    }
}
