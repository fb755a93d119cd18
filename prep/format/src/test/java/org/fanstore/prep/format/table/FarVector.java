package org.fanstore.prep.format.table;

import static java.nio.ByteOrder.LITTLE_ENDIAN;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The {@code far.sparse} vector: basic.tbl with its names section moved past 4 GiB (an offset no u32 holds) and a
 * 2 GiB hole at the section's start (every non-empty directory's names base above 2^31, so no signed int holds one;
 * names lie past 6 GiB), its job trailer after them, CRC32C recomputed. The file is 6 GiB and mostly holes, so the
 * vector stores its non-zero extents as text
 * ({@code length N}, then {@code extent OFFSET HEX} lines); a reader test expands it into a sparse file and opens
 * that with the real reader (Java: MetadataTableVectorsTest, C: test_meta_table_far.c). Same entries and answers as
 * basic.tbl: {@code far.expect} is basic.expect with far's header.
 */
public final class FarVector {
    static final String NAME = "far.sparse";
    /** Where the moved names section starts: just past 4 GiB. */
    static final long NAMES_AT = (4L << 30) + 4096;
    /** Zero bytes at the section's start, added to every names base: every base is above 2^31. */
    static final long NAMES_GAP = (2L << 30) + 4096;

    /** One run of bytes of the image. */
    public record Extent(long offset, byte[] bytes) {}

    private FarVector() {
    }

    /** The image of the relocated table, from the landed basic table's bytes. */
    static String image(final byte[] basic) {
        final Image image = relocate(basic, NAMES_AT, NAMES_GAP);
        final StringBuilder text = new StringBuilder("# fanstore sparse table image (FarVector): the file is `length`"
            + " bytes of zeros but for each extent (offset, bytes in hex)\n");
        text.append("length ").append(image.length()).append('\n');
        for (final Extent e : image.extents()) {
            text.append("extent ").append(e.offset()).append(' ').append(HexFormat.of().formatHex(e.bytes()))
                .append('\n');
        }
        return text.toString();
    }

    /** A table as the runs of bytes that are not holes, and its length. */
    public record Image(List<Extent> extents, long length) {
        /** Writes the image as a new sparse file. */
        public void write(final Path target) throws IOException {
            try (FileChannel out = FileChannel.open(target, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                StandardOpenOption.SPARSE)) {
                out.write(ByteBuffer.allocate(1), length - 1);
                for (final Extent e : extents) {
                    final ByteBuffer bytes = ByteBuffer.wrap(e.bytes());
                    for (long at = e.offset(); bytes.hasRemaining(); ) {
                        at += out.write(bytes, at);
                    }
                }
            }
        }
    }

    /**
     * {@code table} (a dataset's table as prep wrote it, or a landed one with its job trailer) with its names section
     * moved to {@code namesAt} and {@code gap} zero bytes at the section's start (added to every non-empty
     * directory's names base), its trailer after the section, the CRC32C recomputed: the same entries and answers,
     * at offsets past 2 or 4 GiB. The names section is the table's last (the writer's order).
     */
    public static Image relocate(final byte[] table, final long namesAt, final long gap) {
        final ByteBuffer b = ByteBuffer.wrap(table).order(LITTLE_ENDIAN);
        final long entries = b.getLong(ENTRY_COUNT_OFFSET);
        final int namesOff = (int)b.getLong(NAMES_OFFSET_OFFSET);
        final int namesLen = (int)b.getLong(NAMES_LENGTH_OFFSET);
        final int tableLen = (int)b.getLong(TABLE_LENGTH_OFFSET);
        final boolean landed = b.getLong(GENERATION_OFFSET) != 0;

        final ByteBuffer front = ByteBuffer.wrap(java.util.Arrays.copyOf(table, namesOff)).order(LITTLE_ENDIAN);
        final long entriesOff = front.getLong(ENTRIES_OFFSET_OFFSET);
        final long attributesOff = front.getLong(ATTRIBUTES_OFFSET_OFFSET);
        for (long i = 0; i < entries; i++) {
            final int at = (int)entryOffset(entriesOff, (int)i);
            final int attribute = front.getShort(at + ENTRY_ATTRIBUTE_OFFSET) & 0xffff;
            final int mode = front.getInt((int)attributesOff + attribute * ATTRIBUTE_LENGTH);
            if ((mode & 0170000) == 0040000 && front.getInt(at + ENTRY_CHILD_COUNT_OFFSET) != 0) {
                final long word = front.getLong(at + ENTRY_NAMES_BASE_OFFSET);   // base, then the first child's u16
                front.putLong(at + ENTRY_NAMES_BASE_OFFSET, (word & ~MAX_U48) | ((word & MAX_U48) + gap));
            }
        }
        final long newNamesLen = gap + namesLen;
        final long newTableLen = alignSection(namesAt + newNamesLen);
        front.putLong(NAMES_OFFSET_OFFSET, namesAt);
        front.putLong(NAMES_LENGTH_OFFSET, newNamesLen);
        front.putLong(TABLE_LENGTH_OFFSET, newTableLen);
        if (landed) {
            front.putLong(LOCAL_ROOT_OFFSET_OFFSET, newTableLen);
        }

        final List<Extent> extents = new ArrayList<>();
        extents.add(new Extent(0, front.array()));
        extents.add(new Extent(namesAt + gap, java.util.Arrays.copyOfRange(table, namesOff, namesOff + namesLen)));
        final byte[] trailer = java.util.Arrays.copyOfRange(table, tableLen, table.length);
        if (trailer.length > 0) {
            extents.add(new Extent(newTableLen, trailer));
        }
        ByteBuffer.wrap(front.array()).order(LITTLE_ENDIAN).putInt(CRC_OFFSET, crc(extents, newTableLen));
        return new Image(extents, newTableLen + trailer.length);
    }

    /** far.expect: basic.expect's lines with the header's table, total, table_len and crc those of the image. */
    static String expectations(final String basicExpect, final Path expanded) throws IOException {
        final long total = Files.size(expanded);
        final ByteBuffer header = ByteBuffer.allocate(HEADER_LENGTH).order(LITTLE_ENDIAN);
        try (FileChannel in = FileChannel.open(expanded, StandardOpenOption.READ)) {
            in.read(header, 0);
        }
        final StringBuilder out = new StringBuilder();
        for (final String line : basicExpect.split("\n")) {
            String l = line;
            if (l.startsWith("table ")) {
                l = "table " + NAME;
            } else if (l.startsWith("header ")) {
                l = l.replaceFirst(" total=\\d+", " total=" + total)
                    .replaceFirst(" table_len=\\d+", " table_len=" + header.getLong(TABLE_LENGTH_OFFSET))
                    .replaceFirst(" crc=[0-9a-f]+", String.format(" crc=%08x", header.getInt(CRC_OFFSET)));
            }
            out.append(l).append('\n');
        }
        return out.toString();
    }

    /** Writes the image's file at {@code target}: a sparse file, only the extents written. */
    static void expand(final Path image, final Path target) throws IOException {
        final List<String> lines = Files.readAllLines(image, US_ASCII);
        try (FileChannel out = FileChannel.open(target, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
            StandardOpenOption.SPARSE)) {
            for (final String line : lines) {
                if (line.startsWith("length ")) {
                    final long length = Long.parseLong(line.substring(7).trim());
                    out.write(ByteBuffer.allocate(1), length - 1);
                } else if (line.startsWith("extent ")) {
                    final String[] f = line.split(" ");
                    final ByteBuffer bytes = ByteBuffer.wrap(HexFormat.of().parseHex(f[2]));
                    for (long at = Long.parseLong(f[1]); bytes.hasRemaining(); ) {
                        at += out.write(bytes, at);
                    }
                }
            }
        }
    }

    /** The table's CRC32C over the image: extents and the zeros between them, CRC field and job area excluded. */
    private static int crc(final List<Extent> extents, final long tableLength) {
        final TableChecksum sum = new TableChecksum();
        final ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
        long at = 0;
        for (final Extent e : extents) {
            if (e.offset() >= tableLength) {
                break;
            }
            for (; at < e.offset(); ) {
                final int n = (int)Math.min(zeros.capacity(), e.offset() - at);
                sum.update(zeros.duplicate().limit(n));
                at += n;
            }
            sum.update(ByteBuffer.wrap(e.bytes()));   // the CRC field and the job area are skipped by position
            at += e.bytes().length;
        }
        for (; at < tableLength; ) {   // the padding after the last section
            final int n = (int)Math.min(zeros.capacity(), tableLength - at);
            sum.update(zeros.duplicate().limit(n));
            at += n;
        }
        return sum.value();
    }
}
