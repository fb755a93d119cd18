package org.fanstore.runtime.fill;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.util.Arrays;
import java.util.zip.CRC32C;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.runtime.placement.BodyCheck;
import org.fanstore.runtime.placement.BodyIndex;
import org.fanstore.runtime.placement.CorruptBodyException;

/**
 * CRC32Cs of a pull file's bytes, summed while they land (the received bytes are still in the CPU's cache), so
 * neither a reader riding the pull nor the publisher reads the file back for its checks. Reading back would cost
 * the rider a second read of its file, and the publisher a read of each whole partition and then of each body once
 * more for its slice, all while the first pass still competes for the CPU.
 *
 * <p>The file is cut into pieces at every body's start and end and at every range boundary, and each piece's CRC is
 * kept: a piece lies inside one range, so a transfer of whole ranges completes each of its pieces, and any body or the
 * whole file is a run of whole pieces, whose CRC {@link Crc32cConcat} joins. The CRC proves the bytes received, not
 * their place in the file: {@link PositionalSink} writes each at its offset, and the suite's readers checksum every
 * byte they read through the shim.
 *
 * <p>Threads: a transfer's {@link #summing} channel writes only its own pieces; readers of a piece ({@link #crcOf})
 * come after its range landed, which the puller's lock orders after the transfer's last write.
 */
final class LandedCrcs {
    /** What {@link #crcOf} and {@link #whole} return for bytes not all summed yet. */
    static final long UNKNOWN = Long.MIN_VALUE;

    /** Piece i is [cuts[i], cuts[i + 1]); cuts[0] = 0, the last is the file's length. */
    private final long[] cuts;
    private final int[] crc;
    private final boolean[] known;

    /** Pieces for a file of {@code bytes} in ranges of {@code rangeBytes}, with bodies [starts[i], ends[i]). */
    LandedCrcs(long bytes, int rangeBytes, long[] bodyStarts, long[] bodyEnds) {
        int ranges = (int) Math.max(1, (bytes + rangeBytes - 1) / rangeBytes);
        long[] all = new long[ranges + 1 + bodyStarts.length + bodyEnds.length];
        int n = 0;
        for (int r = 0; r < ranges; r++) {
            all[n++] = (long) r * rangeBytes;
        }
        all[n++] = bytes;
        for (int i = 0; i < bodyStarts.length; i++) {
            all[n++] = Math.min(bodyStarts[i], bytes);
            all[n++] = Math.min(bodyEnds[i], bytes);
        }
        Arrays.sort(all);
        int distinct = 0;
        for (int i = 0; i < all.length; i++) {
            if (i == 0 || all[i] != all[i - 1]) {
                all[distinct++] = all[i];
            }
        }
        this.cuts = Arrays.copyOf(all, distinct);
        this.crc = new int[Math.max(0, distinct - 1)];
        this.known = new boolean[crc.length];
    }

    /** Pieces for the pull file of partition {@code info}, cut at the bodies of {@code entries} (all in it). */
    static LandedCrcs of(PartitionInfo info, int rangeBytes, BodyIndex bodies, int[] entries) {
        long[] starts = new long[entries.length];
        long[] ends = new long[entries.length];
        for (int i = 0; i < entries.length; i++) {
            starts[i] = bodies.bodyOffset(entries[i]);
            ends[i] = starts[i] + bodies.storedLength(entries[i]);
        }
        return new LandedCrcs(info.bytes(), rangeBytes, starts, ends);
    }

    /**
     * Records with {@code check} the CRC32C of every body stored raw among {@code entries} whose bytes all landed, so
     * publishing them as slices reads none back; one that disagrees with its table entry is logged there and refused
     * from then on, as a read-back would have found.
     */
    void settle(BodyIndex bodies, int[] entries, BodyCheck check) {
        for (int index : entries) {
            if (bodies.codec(index) != PartitionDescriptor.CODEC_RAW) {
                continue;                          // its CRC is of the decoded bytes: checked when decoded
            }
            long sum = crcOf(bodies.bodyOffset(index), bodies.storedLength(index));
            if (sum == UNKNOWN) {
                continue;
            }
            try {
                check.settle(index, (int) sum);
            } catch (CorruptBodyException e) {
                // BodyCheck logged it, naming the file; its opens get EIO, the partition's other files are good
            }
        }
    }

    /**
     * A channel that sums what passes through it into the pieces from {@code position} (a range boundary) on, then
     * hands it to {@code sink} unchanged.
     */
    WritableByteChannel summing(WritableByteChannel sink, long position) {
        int first = Arrays.binarySearch(cuts, position);
        if (first < 0) {
            throw new IllegalArgumentException("position " + position + " is not a range boundary");
        }
        return new Summing(sink, first);
    }

    /** The CRC32C of bytes [offset, offset + length), or {@link #UNKNOWN} while some of them have not landed. */
    long crcOf(long offset, long length) {
        if (length == 0) {
            return 0;
        }
        int from = Arrays.binarySearch(cuts, offset);
        int to = Arrays.binarySearch(cuts, offset + length);
        if (from < 0 || to < 0) {
            return UNKNOWN;               // not a body's bounds: never asked, but never a wrong answer either
        }
        int sum = 0;
        for (int i = from; i < to; i++) {
            if (!known[i]) {
                return UNKNOWN;
            }
            sum = Crc32cConcat.concat(sum, crc[i], cuts[i + 1] - cuts[i]);
        }
        return sum & 0xFFFFFFFFL;
    }

    /** The whole file's CRC32C, or {@link #UNKNOWN} while some of it has not landed. */
    long whole() {
        return crcOf(0, cuts[cuts.length - 1]);
    }

    /** Sums a transfer's bytes into consecutive pieces; a piece's CRC is kept once its last byte passed. */
    private final class Summing implements WritableByteChannel {
        private final WritableByteChannel sink;
        private final CRC32C running = new CRC32C();
        private int piece;
        private long at;

        Summing(WritableByteChannel sink, int piece) {
            this.sink = sink;
            this.piece = piece;
            this.at = cuts[piece];
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            ByteBuffer view = src.duplicate();
            while (view.hasRemaining() && piece < crc.length) {
                int n = (int) Math.min(view.remaining(), cuts[piece + 1] - at);
                int limit = view.limit();
                view.limit(view.position() + n);
                running.update(view);             // advances view to the new limit
                view.limit(limit);
                at += n;
                if (at == cuts[piece + 1]) {
                    crc[piece] = (int) running.getValue();
                    known[piece] = true;
                    running.reset();
                    piece++;
                }
            }
            return sink.write(src);
        }

        @Override
        public boolean isOpen() {
            return sink.isOpen();
        }

        @Override
        public void close() {
        }
    }
}
