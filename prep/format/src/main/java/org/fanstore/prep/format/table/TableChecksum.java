package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.table.MetadataTableDescriptor.CRC_OFFSET;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.HEADER_LENGTH;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The table's CRC32C: every byte of the table as prep wrote it except the CRC field and the job area
 * ({@code [CRC_OFFSET, HEADER_LENGTH)}), so the dataset's file and every node's landed copy have the same checksum.
 * Bytes may be fed in pieces, in file order, as they are read or land.
 */
public final class TableChecksum {
    private final CRC32C crc = new CRC32C();
    private long position;

    /** Feeds {@code bytes} (position to limit, not consumed), which lie at the next offset of the table. */
    public void update(final ByteBuffer bytes) {
        final int length = bytes.remaining();
        final long start = position;
        final long end = start + length;
        if (end <= CRC_OFFSET || start >= HEADER_LENGTH) {
            crc.update(bytes.duplicate());
        } else {
            final ByteBuffer piece = bytes.duplicate();
            if (start < CRC_OFFSET) {
                piece.limit(piece.position() + (int)(CRC_OFFSET - start));
                crc.update(piece);
            }
            if (end > HEADER_LENGTH) {
                piece.limit(bytes.limit()).position(bytes.position() + (int)(HEADER_LENGTH - start));
                crc.update(piece);
            }
        }
        position = end;
    }

    /** Bytes fed so far. */
    public long position() {
        return position;
    }

    public int value() {
        return (int)crc.getValue();
    }

    /** The checksum of the first {@code tableLength} bytes of {@code table}. */
    public static int of(final TableMapping table, final long tableLength) {
        final TableChecksum sum = new TableChecksum();
        for (long at = 0; at < tableLength; ) {
            final ByteBuffer piece = table.piece(at, Math.min(1 << 20, tableLength - at));
            sum.update(piece);
            at += piece.remaining();
        }
        return sum.value();
    }
}
