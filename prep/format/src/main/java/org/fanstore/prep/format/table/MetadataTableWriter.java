package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.FileModes.isDirectory;

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
        final BreadthFirstNamespace bf = new BreadthFirstNamespace(
            SortedNamespace.of(entries, partitions, broadcastPartitions));
        final int n = bf.order.length;
        try (TableSink sink = TableSink.create(target, n, bf.attributes, bf.attributeCount, bf.namesLength,
            datasetId, partitions, broadcastPartitions, stDev)) {
            for (int k = 0; k < n; k++) {
                final NamespaceEntry e = bf.entry(k);
                final int count = isDirectory(e.mode()) ? bf.ns.childCount[bf.order[k]] : 0;
                sink.entry(k, e, bf.attribute[k], bf.parent[k], bf.nameOffset[k], bf.storedLength(k),
                    bf.extendsParent[k], bf.namesBase[k], bf.firstChild[k], count);
                sink.bucket(bf.hash(k), k);
            }
            writeNames(sink, bf);
            return sink.publish();
        }
    }

    /** Each directory's children's stored names (and symlink targets), directories in entry order. */
    private static void writeNames(final TableSink sink, final BreadthFirstNamespace bf) {
        for (int k = 1; k < bf.order.length; k++) {
            final NamespaceEntry e = bf.entry(k);
            final long at = bf.namesBase[bf.parent[k]] + (bf.nameOffset[k] & 0xffffffffL);
            final byte[] key = e.key();
            final int from = bf.storedFrom[k];
            sink.name(at, key, from, key.length - from);
            if (e.linkTarget() != null) {
                sink.name(at + key.length - from, e.linkTarget(), 0, e.linkTarget().length);
            }
        }
    }
}
