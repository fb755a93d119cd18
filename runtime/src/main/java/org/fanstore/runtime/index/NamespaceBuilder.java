package org.fanstore.runtime.index;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.runtime.metadata.MetadataTable;
import org.fanstore.runtime.metadata.MetadataTableDescriptor;
import org.fanstore.runtime.metadata.MetadataTableWriter;
import org.fanstore.runtime.metadata.NamespaceEntry;
import org.fanstore.runtime.placement.BodyIndex;
import org.fanstore.runtime.placement.IndexRecord;
import org.fanstore.runtime.placement.Placement;
import org.fanstore.runtime.placement.Unpacker;

/**
 * Turns the all-gathered index into this rank's view: the shared metadata table (with LOCAL / LOCAL_RAW /
 * COMPRESSED flags and owners as seen from this rank) and the body index the open service needs.
 *
 * <p>Each entry arrives exactly once: a rank contributes the regular partitions it owns (replicas are not
 * re-sent) and rank 0 alone contributes the broadcast partitions; see {@link #contributes}.
 */
public final class NamespaceBuilder {
    /** st_dev reported for every entry: fixed, so the same file has the same identity on every node. */
    public static final int ST_DEV = 0xfa5703;
    /** A job publishes one table and never replaces it, so its generation is a constant (the format forbids 0). */
    private static final long TABLE_GENERATION = 1;

    private NamespaceBuilder() {
    }

    /** True when rank must send the records of partition (regular index, or -1-i for broadcast i). */
    public static boolean contributes(int rank, int partition, Placement placement) {
        return partition < 0 ? rank == 0 : placement.owner(partition) == rank;
    }

    public record Namespace(MetadataTable table, BodyIndex bodies, long tableBytes) {}

    public static Namespace publish(byte[][] contributions, Placement placement, int myRank, Path tablePath,
                                   Path localRoot) throws IOException {
        List<IndexRecord> all = new ArrayList<>();
        for (int rank = 0; rank < contributions.length; rank++) {
            all.addAll(IndexCodec.decode(contributions[rank], rank));
        }
        List<NamespaceEntry> entries = new ArrayList<>(all.size());
        for (IndexRecord r : all) {
            entries.add(toEntry(r, placement, myRank));
        }
        byte[] root = localRoot.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        long bytes = MetadataTableWriter.write(tablePath, entries, root, myRank, placement.size(), ST_DEV,
                TABLE_GENERATION);
        entries = null;
        MetadataTable table = MetadataTable.open(tablePath);
        BodyIndex bodies = new BodyIndex(table.entryCount());
        for (IndexRecord r : all) {
            if (r.entry().isFile()) {
                int index = table.lookup(r.key());
                if (index < 0) {
                    throw new IllegalStateException("entry vanished from the table it was written to: "
                            + new String(r.key(), java.nio.charset.StandardCharsets.UTF_8));
                }
                bodies.set(index, r);
            }
        }
        return new Namespace(table, bodies, bytes);
    }

    /** The one place an index record becomes a table entry: flags and owner as seen from {@code myRank}. */
    private static NamespaceEntry toEntry(IndexRecord r, Placement placement, int myRank) {
        PartitionEntry e = r.entry();
        boolean local = r.broadcast() || placement.holds(myRank, r.partition());
        int owner = r.broadcast() ? myRank : placement.owner(r.partition());
        int flags = 0;
        if (e.isFile()) {
            if (local) {
                flags |= MetadataTableDescriptor.FLAG_LOCAL;
                if (e.codec() == PartitionDescriptor.CODEC_RAW && Unpacker.unpackable(e.path())) {
                    flags |= MetadataTableDescriptor.FLAG_LOCAL_RAW;
                }
            }
            if (e.codec() != PartitionDescriptor.CODEC_RAW) {
                flags |= MetadataTableDescriptor.FLAG_COMPRESSED;
            }
        }
        long size = e.isDir() ? MetadataTableDescriptor.DIRECTORY_SIZE
                : e.isSymlink() ? r.linkTarget().length : e.rawLength();
        return new NamespaceEntry(e.path(), e.mode(), size, e.mtimeSec(), e.mtimeNsec(), e.uid(), e.gid(), flags,
                owner, e.isSymlink() ? r.linkTarget() : null);
    }
}
