package org.fanstore.runtime.placement;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.zip.CRC32C;
import org.fanstore.prep.format.DiscardChannel;
import org.fanstore.prep.format.Lz4Chunked;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.table.MetadataTable;

/**
 * The per-file CRC32C of bodies in this node's partition copies, checked once per entry before the body leaves
 * the node's own hands: unpacked for a direct open ({@link org.fanstore.runtime.slices.Unpacker} checks while it
 * copies and reports here) or served to a peer ({@link LocalPartitions#length}). A bad body is logged once, naming
 * the file and the partition, and refused every time after: readers get EIO, never the wrong bytes.
 */
public final class BodyCheck {
    private static final int UNKNOWN = 0;
    private static final int GOOD = 1;
    private static final int BAD = 2;
    private static final int BUFFER = 1 << 20;
    private static final ThreadLocal<ByteBuffer> RAW_BUFFER =
            ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(BUFFER));

    private final MetadataTable table;
    private final BodyIndex bodies;
    private final LocalPartitions local;
    private final String logPrefix;
    private final String dataset;
    private final AtomicIntegerArray state;

    public BodyCheck(MetadataTable table, BodyIndex bodies, LocalPartitions local, int rank, String dataset) {
        this.table = table;
        this.bodies = bodies;
        this.local = local;
        this.logPrefix = "fanstore rank " + rank + ": ";
        this.dataset = dataset;
        this.state = new AtomicIntegerArray(bodies.entries());
    }

    /**
     * Throws {@link CorruptBodyException} unless entry index's local body matches its CRC32C (checked once).
     *
     * @return whether this call read the body (false: it was checked before)
     */
    public boolean verify(int index) throws IOException {
        int s = state.get(index);
        if (s == GOOD) {
            return false;
        }
        if (s == BAD) {
            throw corrupt(index, "failed its CRC32C check earlier");
        }
        FileChannel in = local.channel(bodies.partition(index));
        if (bodies.codec(index) == PartitionDescriptor.CODEC_RAW) {
            int sum;
            try {
                sum = crc32c(in, bodies.bodyOffset(index), bodies.storedLength(index));
            } catch (EOFException e) {
                throw mismatch(index, "the partition ends inside its body");
            }
            settle(index, sum);
            return true;
        }
        CRC32C crc = new CRC32C();
        try {
            Lz4Chunked.decodeTo(in, bodies.bodyOffset(index), bodies.storedLength(index), table.size(index),
                    DiscardChannel.INSTANCE, crc);
        } catch (IOException | IllegalArgumentException e) {
            throw mismatch(index, "does not decompress (" + e.getMessage() + ")");
        }
        settle(index, (int) crc.getValue());
        return true;
    }

    /**
     * The CRC32C of bytes [offset, offset + length) of {@code in}, a body stored raw (in a partition copy, or in a
     * pull file). A direct buffer per thread: no zeroing of a fresh heap array per file, and CRC32C reads it in place.
     * This is the background slice pass's whole cost (docs/slices.md), so it bounds how soon files are slices.
     *
     * @throws EOFException when the file ends before the body does
     */
    public static int crc32c(FileChannel in, long offset, long length) throws IOException {
        CRC32C crc = new CRC32C();
        ByteBuffer buf = RAW_BUFFER.get();
        long done = 0;
        while (done < length) {
            buf.clear().limit((int) Math.min(buf.capacity(), length - done));
            int n = in.read(buf, offset + done);
            if (n < 0) {
                throw new EOFException("the file ends at byte " + (offset + done) + ", inside the body");
            }
            buf.flip();
            crc.update(buf);
            done += n;
        }
        return (int) crc.getValue();
    }

    /** Records the CRC32C computed while the body was copied; throws when it is wrong. */
    public void settle(int index, int actual) throws CorruptBodyException {
        if (actual == bodies.crc32c(index)) {
            state.set(index, GOOD);
            return;
        }
        throw mismatch(index, String.format("its bytes have CRC32C %08x, the partition table says %08x", actual,
                bodies.crc32c(index)));
    }

    private CorruptBodyException mismatch(int index, String what) {
        CorruptBodyException e = corrupt(index, what);
        if (state.getAndSet(index, BAD) != BAD) {
            System.err.println(logPrefix + e.getMessage());
        }
        return e;
    }

    private CorruptBodyException corrupt(int index, String what) {
        return new CorruptBodyException(new String(table.key(index), StandardCharsets.UTF_8) + " in the local copy of "
                + local.file(bodies.partition(index)).getFileName() + ": " + what + "; not served (readers get EIO):"
                + " run fanstore verify " + dataset);
    }
}
