package org.fanstore.prep.format.table;

import static java.nio.ByteOrder.LITTLE_ENDIAN;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A metadata table file of any length, mapped as overlapping windows so that every offset is a {@code long}: Java 17
 * maps at most 2 GiB per buffer. Window w starts at {@code w << shift} and spans up to {@code 2 << shift} bytes less
 * one (the next window's start plus one stride), so any access of at most one stride ({@code 1 << shift} bytes) that
 * starts at offset o lies whole in window {@code o >>> shift}: one shift and one array load choose it, with no
 * straddling case. The windows share the page cache; only address space is doubled. Bulk transfers go through
 * {@link #piece}, which never crosses a window. Not thread-safe for writes; reads are (the buffers never move).
 *
 * <p>The stride is 1 GiB ({@link #DEFAULT_SHIFT}); tests shrink it with the system property {@value #SHIFT_PROPERTY}
 * so that small tables cross many windows (README.md beside this class, "Mapping in Java").
 */
public final class TableMapping implements AutoCloseable {
    /** log2 of the stride between windows: 1 GiB, so a window (two strides less one byte) fits a Java buffer. */
    public static final int DEFAULT_SHIFT = 30;
    /** Test knob: a smaller shift (12 to 30) so that small tables cross windows. */
    public static final String SHIFT_PROPERTY = "fanstore.table.windowShift";
    private static final int MIN_SHIFT = 12;
    /** Reads 8 bytes in the order UnsafeBuffer.getLong(index) without a byte order uses (the platform's). */
    private static final VarHandle LONG_VIEW =
        MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final MappedByteBuffer[] maps;
    private final UnsafeBuffer[] windows;
    private final int shift;
    private final long mask;
    private final long length;

    private TableMapping(final MappedByteBuffer[] maps, final int shift, final long length) {
        this.maps = maps;
        this.windows = new UnsafeBuffer[maps.length];
        for (int w = 0; w < maps.length; w++) {
            windows[w] = new UnsafeBuffer(maps[w]);
        }
        this.shift = shift;
        this.mask = (1L << shift) - 1;
        this.length = length;
    }

    /** Maps {@code [0, length)} of {@code channel} (length >= 1) with the configured stride. */
    public static TableMapping map(final FileChannel channel, final FileChannel.MapMode mode, final long length)
        throws IOException {
        return map(channel, mode, length, configuredShift());
    }

    static TableMapping map(final FileChannel channel, final FileChannel.MapMode mode, final long length,
        final int shift) throws IOException {
        if (length < 1) {
            throw new IllegalArgumentException("nothing to map: length " + length);
        }
        final long stride = 1L << shift;
        final int count = (int)((length + stride - 1) >>> shift);
        final MappedByteBuffer[] maps = new MappedByteBuffer[count];
        try {
            for (int w = 0; w < count; w++) {
                final long start = (long)w << shift;
                maps[w] = channel.map(mode, start, Math.min(length - start, 2 * stride - 1));
            }
        } catch (final IOException | RuntimeException e) {
            for (final MappedByteBuffer m : maps) {
                if (m != null) {
                    IoUtil.unmap(m);
                }
            }
            throw e;
        }
        return new TableMapping(maps, shift, length);
    }

    /** The stride the mappings of this process use: 1 GiB, or what {@value #SHIFT_PROPERTY} makes it. */
    public static long configuredStride() {
        return 1L << configuredShift();
    }

    static int configuredShift() {
        final Integer shift = Integer.getInteger(SHIFT_PROPERTY);
        if (shift == null) {
            return DEFAULT_SHIFT;
        }
        if (shift < MIN_SHIFT || shift > DEFAULT_SHIFT) {
            throw new IllegalArgumentException(SHIFT_PROPERTY + "=" + shift + " is outside [" + MIN_SHIFT + ", "
                + DEFAULT_SHIFT + "]");
        }
        return shift;
    }

    /** Bytes mapped. */
    public long length() {
        return length;
    }

    /** Bytes one access may span: the stride. */
    public long stride() {
        return mask + 1;
    }

    public byte getByte(final long at) {
        return windows[(int)(at >>> shift)].getByte((int)(at & mask));
    }

    /** Little-endian u32 (as an int) at {@code at}. */
    public int getInt(final long at) {
        return windows[(int)(at >>> shift)].getInt((int)(at & mask), LITTLE_ENDIAN);
    }

    /** Little-endian 64-bit value at {@code at}. */
    public long getLong(final long at) {
        return windows[(int)(at >>> shift)].getLong((int)(at & mask), LITTLE_ENDIAN);
    }

    /** Copies {@code into.length} bytes from {@code at}, across windows when needed. */
    public void getBytes(final long at, final byte[] into) {
        for (int done = 0; done < into.length; ) {
            final long from = at + done;
            final int n = (int)Math.min(into.length - done, stride() - (from & mask));
            windows[(int)(from >>> shift)].getBytes((int)(from & mask), into, done, n);
            done += n;
        }
    }

    /** Whether the {@code key.length} bytes at {@code at} equal {@code key}. */
    public boolean bytesEqual(final long at, final byte[] key) {
        return bytesEqual(at, key, 0, key.length);
    }

    /** Whether the {@code length} bytes at {@code at} equal {@code key[from .. from + length)}. */
    public boolean bytesEqual(final long at, final byte[] key, final int from, final int length) {
        if (length > stride() - (at & mask)) {
            for (int i = 0; i < length; i++) {
                if (getByte(at + i) != key[from + i]) {
                    return false;
                }
            }
            return true;
        }
        final UnsafeBuffer w = windows[(int)(at >>> shift)];
        final int base = (int)(at & mask);
        int i = 0;
        for (final int words = length & ~7; i < words; i += 8) {
            if (w.getLong(base + i) != (long)LONG_VIEW.get(key, from + i)) {
                return false;
            }
        }
        for (; i < length; i++) {
            if (w.getByte(base + i) != key[from + i]) {
                return false;
            }
        }
        return true;
    }

    public void putByte(final long at, final byte value) {
        windows[(int)(at >>> shift)].putByte((int)(at & mask), value);
    }

    public void putInt(final long at, final int value) {
        windows[(int)(at >>> shift)].putInt((int)(at & mask), value, LITTLE_ENDIAN);
    }

    public void putLong(final long at, final long value) {
        windows[(int)(at >>> shift)].putLong((int)(at & mask), value, LITTLE_ENDIAN);
    }

    /** Writes {@code bytes} at {@code at}, across windows when needed. */
    public void putBytes(final long at, final byte[] bytes) {
        for (int done = 0; done < bytes.length; ) {
            final long to = at + done;
            final int n = (int)Math.min(bytes.length - done, stride() - (to & mask));
            windows[(int)(to >>> shift)].putBytes((int)(to & mask), bytes, done, n);
            done += n;
        }
    }

    /** Writes {@code data} (position to limit, not consumed) at {@code at}, across windows when needed. */
    public void putBytes(final long at, final ByteBuffer data) {
        final ByteBuffer from = data.duplicate();
        for (long to = at; from.hasRemaining(); ) {
            final ByteBuffer into = piece(to, from.remaining());
            final int n = into.remaining();
            final int limit = from.limit();
            from.limit(from.position() + n);
            into.put(from);
            from.limit(limit);
            to += n;
        }
    }

    /** Fills {@code count} bytes from {@code at} with {@code value}. */
    public void setMemory(final long at, final long count, final byte value) {
        for (long done = 0; done < count; ) {
            final long to = at + done;
            final int n = (int)Math.min(count - done, stride() - (to & mask));
            windows[(int)(to >>> shift)].setMemory((int)(to & mask), n, value);
            done += n;
        }
    }

    /**
     * A buffer over {@code [at, at + n)} with {@code n = min(max, what the window of at holds from at)}: all of
     * {@code max} when it is at most one stride and inside the file, else at least one stride (or up to the end).
     * For channel reads, checksums and copies, done piece by piece.
     */
    public ByteBuffer piece(final long at, final long max) {
        final MappedByteBuffer m = maps[(int)(at >>> shift)];
        final int from = (int)(at & mask);
        final long n = Math.min(max, m.capacity() - from);
        final ByteBuffer view = m.duplicate();
        view.limit(from + (int)n).position(from);
        return view.slice();
    }

    /** Writes changed pages back (for a file that must survive the process). */
    public void force() {
        for (final MappedByteBuffer m : maps) {
            m.force();
        }
    }

    /** Unmaps every window; the mapping must not be used afterwards. */
    @Override
    public void close() {
        for (final MappedByteBuffer m : maps) {
            IoUtil.unmap(m);
        }
    }
}
