package org.fanstore.prep.format.table;

import java.util.Arrays;

/**
 * A namespace's keys (each followed by a symlink's target) in chunks of bytes, so that a million keys cost their
 * bytes and not a million arrays (16-byte header and padding each). A record lies whole in one chunk and is named by
 * a long: chunk index in the high 32 bits, position in the low 32. Append only; records are never moved.
 */
final class KeyArena {
    /** Chunk size: large enough that the unused end of each chunk is noise, small enough to waste little. */
    private static final int CHUNK = 1 << 20;

    private byte[][] chunks = new byte[4][];
    private int chunkCount;
    private int used = CHUNK;

    /** Appends {@code first} then {@code second} (null for none) as one record; returns its address. */
    long add(final byte[] first, final byte[] second) {
        final int length = first.length + (second == null ? 0 : second.length);
        byte[] chunk = chunkCount == 0 ? null : chunks[chunkCount - 1];
        if (chunk == null || chunk.length - used < length) {
            chunk = new byte[Math.max(CHUNK, length)];
            if (chunkCount == chunks.length) {
                chunks = Arrays.copyOf(chunks, 2 * chunkCount);
            }
            chunks[chunkCount++] = chunk;
            used = 0;
        }
        final long at = (long)(chunkCount - 1) << 32 | used;
        System.arraycopy(first, 0, chunk, used, first.length);
        if (second != null) {
            System.arraycopy(second, 0, chunk, used + first.length, second.length);
        }
        used += length;
        return at;
    }

    /** The chunk holding the record at {@code at}. */
    byte[] chunk(final long at) {
        return chunks[(int)(at >>> 32)];
    }

    /** The record's position in its {@link #chunk}. */
    static int position(final long at) {
        return (int)at;
    }
}
