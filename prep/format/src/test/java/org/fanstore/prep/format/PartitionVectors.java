package org.fanstore.prep.format;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.fanstore.prep.format.FileModes.S_IFDIR;
import static org.fanstore.prep.format.FileModes.S_IFLNK;
import static org.fanstore.prep.format.FileModes.S_IFREG;
import static org.fanstore.prep.format.PartitionDescriptor.*;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Builds the golden dataset in {@code tests/vectors/partition/}: {@code part-00000.fsp} and {@code manifest.txt}
 * written by the real {@link PartitionWriter} and {@link Manifest} from the fixed tree below (fixed modes,
 * owners and mtimes, so nothing depends on the machine), and {@code partition.expect}: every header field and
 * table entry computed here from the tree, not by reading the partition back, for the Java and C readers to
 * check against. Deterministic: regenerating must reproduce the committed files byte for byte.
 */
final class PartitionVectors {
    static final String PARTITION = regularFileName(0);
    static final String EXPECT = "partition.expect";
    static final byte[] NAME = "golden".getBytes(US_ASCII);
    static final int UID = 1000;
    static final int GID = 100;

    /** One thing of the fixed source tree; {@code content} is a file's bytes or a symlink's target. */
    record Node(String path, int type, int mode, long mtimeSec, int mtimeNsec, byte[] content, boolean lz4) {
        byte[] pathBytes() {
            return path.getBytes(US_ASCII);
        }
    }

    /** An entry as the golden partition must hold it; {@code stored} is its body as written. */
    record Expected(PartitionEntry entry, byte[] stored) {
    }

    private PartitionVectors() {
    }

    /** The fixed tree, sorted by path bytes as the table is. Paths are ASCII without spaces (see README.md). */
    static List<Node> tree() {
        final byte[] pattern = new byte[3000];
        for (int i = 0; i < pattern.length; i++) {
            pattern[i] = (byte)"fanstore golden vector ".charAt(i % 23);
        }
        final List<Node> nodes = new ArrayList<>(List.of(
            new Node("", TYPE_DIRECTORY, S_IFDIR | 0755, 1_700_000_000L, 0, null, false),
            new Node("data", TYPE_DIRECTORY, S_IFDIR | 0750, 1_700_000_001L, 1, null, false),
            new Node("data/empty.bin", TYPE_FILE, S_IFREG | 0644, 1_700_000_002L, 2, new byte[0], false),
            new Node("data/hello.txt", TYPE_FILE, S_IFREG | 0600, 1_700_000_003L, 999_999_999,
                "hello, fanstore\n".getBytes(US_ASCII), false),
            new Node("data/nested", TYPE_DIRECTORY, S_IFDIR | 0700, 1_700_000_004L, 0, null, false),
            new Node("data/nested/deep", TYPE_DIRECTORY, S_IFDIR | 0755, 1_700_000_005L, 0, null, false),
            new Node("data/nested/deep/leaf.txt", TYPE_FILE, S_IFREG | 0444, -5L, 0,
                "leaf\n".getBytes(US_ASCII), false),
            new Node("data/pattern.txt", TYPE_FILE, S_IFREG | 0644, 1_700_000_006L, 500, pattern, true),
            new Node("link", TYPE_SYMLINK, S_IFLNK | 0777, 1_700_000_007L, 0,
                "data/hello.txt".getBytes(US_ASCII), false)));
        nodes.sort((a, b) -> Arrays.compareUnsigned(a.pathBytes(), b.pathBytes()));
        return nodes;
    }

    /** The entries the golden partition holds, with body offsets absolute in the file, from the tree alone. */
    static List<Expected> expected() {
        final List<Node> tree = tree();
        long tableLength = 0;
        for (final Node n : tree) {
            tableLength += entryLength(n.pathBytes().length);
        }
        final long data = dataOffset(tableLength);
        long offset = data;
        final List<Expected> out = new ArrayList<>();
        for (final Node n : tree) {
            if (n.type() == TYPE_DIRECTORY) {
                out.add(new Expected(new PartitionEntry(n.pathBytes(), n.type(), CODEC_RAW, n.mode(), UID, GID,
                    n.mtimeSec(), n.mtimeNsec(), 0, 0, data, 0), new byte[0]));
                continue;
            }
            final byte[] stored = n.lz4() ? lz4(n.content()) : n.content();
            final CRC32C crc = new CRC32C();
            crc.update(n.content());
            out.add(new Expected(new PartitionEntry(n.pathBytes(), n.type(), n.lz4() ? CODEC_LZ4_CHUNKED : CODEC_RAW,
                n.mode(), UID, GID, n.mtimeSec(), n.mtimeNsec(), n.content().length, stored.length, offset,
                (int)crc.getValue()), stored));
            offset += stored.length;
        }
        return out;
    }

    /** Writes the partition, its metadata table, the manifest and the expectations into {@code dir}; returns the
     * names written. */
    static List<String> writeAll(final Path dir) throws IOException {
        Files.createDirectories(dir);
        final List<Expected> expected = expected();
        long tableLength = 0;
        for (final Expected e : expected) {
            tableLength += entryLength(e.entry().path().length);
        }
        final Path file = dir.resolve(PARTITION);
        Files.deleteIfExists(file);
        final PartitionWriter.Written written;
        try (PartitionWriter writer = PartitionWriter.create(file, 0, false, expected.size(), tableLength)) {
            for (final Expected e : expected) {
                final PartitionEntry entry = e.entry();
                if (entry.isDir()) {
                    writer.addDirectory(entry);
                } else {
                    writer.addBody(entry, entry.codec(), entry.rawLength(), entry.crc32c(), e.stored(),
                        e.stored().length);
                }
            }
            written = writer.finish();
        }
        org.fanstore.prep.format.table.DatasetTable.write(dir, manifest(expected, written)).write(dir);
        Files.writeString(dir.resolve(EXPECT), expectations(expected, tableLength), US_ASCII);
        return List.of(PARTITION, TableInfo.FILE_NAME, Manifest.FILE_NAME, EXPECT);
    }

    static Manifest manifest(final List<Expected> expected, final PartitionWriter.Written written) {
        long files = 0;
        long dirs = 0;
        long symlinks = 0;
        long raw = 0;
        long stored = 0;
        for (final Expected e : expected) {
            final PartitionEntry entry = e.entry();
            files += entry.isFile() ? 1 : 0;
            dirs += entry.isDir() ? 1 : 0;
            symlinks += entry.isSymlink() ? 1 : 0;
            raw += entry.isFile() ? entry.rawLength() : 0;
            stored += entry.storedLength();
        }
        return new Manifest(NAME, files, dirs, symlinks, raw, stored, Compression.LZ4, List.of(),
            List.of(new PartitionInfo(0, PARTITION, written.fileBytes(), written.crc32c(), written.entries(), false)));
    }

    /** partition.expect: one header line, then one line per entry in table order (see README.md). */
    static String expectations(final List<Expected> expected, final long tableLength) {
        final StringBuilder sb = new StringBuilder();
        sb.append("# golden partition ").append(PARTITION).append(": the header, then every table entry in order.\n");
        sb.append("# Paths are ASCII without spaces; the root (empty path) is written '.'. offset is relative to\n");
        sb.append("# the data area, as in the table; mode is octal, crc hex (CRC32C of the raw bytes).\n");
        sb.append(String.format("header version=%x header_size=%d index=0 flags=0 entries=%d table_offset=%d " +
                "table_length=%d data_offset=%d entry_fixed=%d\n", FORMAT_VERSION, HEADER_LENGTH, expected.size(),
            HEADER_LENGTH, tableLength, dataOffset(tableLength), ENTRY_FIXED_LENGTH));
        final long data = dataOffset(tableLength);
        for (final Expected e : expected) {
            final PartitionEntry x = e.entry();
            final String path = x.path().length == 0 ? "." : new String(x.path(), US_ASCII);
            sb.append(String.format("entry path=%s type=%d codec=%d mode=%o uid=%d gid=%d mtime_sec=%d " +
                    "mtime_nsec=%d raw=%d stored=%d offset=%d crc=%08x\n", path, x.type(), x.codec(), x.mode(),
                x.uid(), x.gid(), x.mtimeSec(), x.mtimeNsec(), x.rawLength(), x.storedLength(),
                x.bodyOffset() - data, x.crc32c()));
        }
        return sb.toString();
    }

    private static byte[] lz4(final byte[] raw) {
        final Lz4Chunked.Encoder encoder = Lz4Chunked.encoder(Compression.LZ4);
        final byte[] out = new byte[(int)encoder.maxEncodedLength(raw.length)];
        return Arrays.copyOf(out, encoder.encode(raw, 0, raw.length, out, 0));
    }
}
