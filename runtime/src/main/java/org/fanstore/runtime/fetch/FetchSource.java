package org.fanstore.runtime.fetch;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * What a rank serves to remote fetchers: the objects (files) it holds, by id. The runtime implements it
 * over its local partitions, typically with {@code FileChannel.read(dst, partitionOffset + position)}
 * positional reads, which are safe from the several worker threads that call it concurrently.
 */
public interface FetchSource {
    /** What {@link #length} returns for an id this rank does not hold. */
    long NOT_HELD = -1;

    /** The object's length in bytes, or {@link #NOT_HELD}. */
    long length(long id) throws IOException;

    /**
     * Fills all of {@code dst.remaining()} with the object's bytes starting at {@code position} (the range
     * was checked against {@link #length}). Must not return with {@code dst} partly filled: throw instead.
     */
    void read(long id, long position, ByteBuffer dst) throws IOException;

    /**
     * Whether bytes [position, position + length) of the object can be read now: a partition still being filled
     * holds only the ranges that landed (answered NOT_HELD otherwise, so the requester asks its next source). For a
     * reader's request ({@code reader}) the source may first bring the bytes in itself, within a bound.
     */
    default boolean holds(long id, long position, long length, boolean reader) {
        return true;
    }
}
