package org.fanstore.prep.format.table;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.function.BiConsumer;

import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.PartitionReader;
import org.fanstore.prep.format.TableInfo;

/**
 * {@code fanstore verify}'s check of the metadata table: present, the size and CRC32C the manifest records, a valid
 * structure, this dataset's identity, and every partition entry in it with the same stat fields and body location
 * (so a table left from another prep, or edited, is caught even when its own checksum was recomputed).
 */
public final class TableVerifier {
    private static final int READ_PIECE = 8 << 20;

    private TableVerifier() {
    }

    /** Reports each fault found as (path or null, problem); the file's name is the caller's to add. */
    public static void check(final Path dir, final Manifest manifest, final BiConsumer<String, String> fault)
        throws IOException {
        final TableInfo info = manifest.table();
        final String fix = "run fanstore upgrade " + dir + " to rebuild it from the partitions, or prep again";
        if (info == null) {
            fault.accept(null, "no " + TableInfo.FILE_NAME + " (prepped by an older fanstore): " + fix);
            return;
        }
        final Path file = dir.resolve(info.fileName());
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            fault.accept(null, "missing: " + fix);
            return;
        }
        if (!Files.isRegularFile(file)) {
            fault.accept(null, "not a regular file: " + fix);
            return;
        }
        final long length = Files.size(file);
        if (length != info.bytes()) {
            fault.accept(null, length + " bytes, " + Manifest.FILE_NAME + " says " + info.bytes() + ": " + fix);
            return;
        }
        final int crc = checksum(file, length);
        if (crc != info.crc32c()) {
            fault.accept(null, String.format("CRC32C %08x, %s says %08x: %s", crc, Manifest.FILE_NAME,
                info.crc32c(), fix));
            return;
        }
        try (MetadataTable table = MetadataTable.openDataset(file)) {
            if (table.recordedCrc() != crc) {
                fault.accept(null, String.format("header records CRC32C %08x, the table sums to %08x",
                    table.recordedCrc(), crc));
            }
            if (table.datasetId() != manifest.datasetId()) {
                fault.accept(null, String.format("belongs to another dataset (id %016x, this one is %016x): %s",
                    table.datasetId(), manifest.datasetId(), fix));
                return;
            }
            long named = 0;
            for (final PartitionInfo p : manifest.partitions()) {
                named += crossCheck(dir, p, table, manifest.nameBytes(), fault);
            }
            if (named != table.entryCount() - 1) {
                fault.accept(null, "holds " + (table.entryCount() - 1) + " names, the partitions " + named);
            }
        } catch (final IOException malformed) {
            fault.accept(null, malformed.getMessage());
        }
    }

    /** Compares every entry of partition p with the table's; returns the entries read. */
    private static long crossCheck(final Path dir, final PartitionInfo p, final MetadataTable table,
        final byte[] name, final BiConsumer<String, String> fault) {
        final int partition = p.broadcast() ? -1 - p.index() : p.index();
        try (PartitionReader reader = PartitionReader.open(dir.resolve(p.fileName()))) {
            for (final PartitionEntry e : reader.entries()) {
                final byte[] key = DatasetTable.keyOf(name, e.path());
                final int i = table.lookup(key);
                final NamespaceEntry want = DatasetTable.entryOf(key, e, partition,
                    e.isSymlink() ? reader.readRaw(e) : null);
                final String where = e.pathString();
                if (i < 0) {
                    fault.accept(where, "in " + p.fileName() + " but not in the table");
                } else if (!same(table, i, want)) {
                    fault.accept(where, "the table's entry differs from " + p.fileName() + "'s");
                }
            }
            return reader.entries().size();
        } catch (final IOException | RuntimeException unreadable) {
            return 0;   // the partition check names it
        }
    }

    private static boolean same(final MetadataTable t, final int i, final NamespaceEntry e) {
        final boolean common = t.mode(i) == e.mode() && t.mtimeSec(i) == e.mtimeSec() &&
            t.mtimeNsec(i) == e.mtimeNsec() && t.uid(i) == e.uid() && t.gid(i) == e.gid() &&
            (t.flags(i) & ~MetadataTableDescriptor.FLAG_NAME_EXTENDS_PARENT) == e.flags() &&
            t.partition(i) == e.partition() && Arrays.equals(t.linkTarget(i), e.linkTarget());
        if (!common || e.partition() == MetadataTableDescriptor.NO_PARTITION) {
            return common;
        }
        return t.size(i) == e.size() && t.bodyOffset(i) == e.bodyOffset() && t.storedLength(i) == e.storedLength() &&
            t.crc32c(i) == e.crc32c() && t.codec(i) == e.codec();
    }

    private static int checksum(final Path file, final long length) throws IOException {
        final TableChecksum sum = new TableChecksum();
        final ByteBuffer buffer = ByteBuffer.allocateDirect(READ_PIECE);
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
            for (long at = 0; at < length; ) {
                buffer.clear();
                final int n = in.read(buffer, at);
                if (n < 0) {
                    break;
                }
                buffer.flip();
                sum.update(buffer);
                at += n;
            }
        }
        return sum.value();
    }
}
