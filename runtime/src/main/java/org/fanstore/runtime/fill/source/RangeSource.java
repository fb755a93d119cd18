package org.fanstore.runtime.fill.source;

import java.io.IOException;
import java.nio.channels.WritableByteChannel;

/**
 * Where bytes of a partition file can be read from: the dataset's home (a shared file system or an object
 * store), a peer (range reads all). Thread-safe: transfers of several ranges run at once.
 */
public interface RangeSource {
    /** How the statistics and the log name this source: "sharedfs", "objectstore", "peer". */
    String kind();

    /**
     * Writes bytes [position, position + length) of partition p (id: regular p, or -1-i for broadcast i) to sink.
     *
     * @param forReader a reader waits for these bytes (a peer serves them at normal CPU priority, background ranges
     *     at the lowest)
     * @throws NotHeldException when the source does not hold those bytes (yet): ask the next one
     * @throws SourceDownException when the source is lost or stalled: do not ask it again
     * @throws IOException any other failure, with a message naming what failed (a file, a rank)
     */
    void read(int p, long position, long length, WritableByteChannel sink, boolean forReader) throws IOException;

    /**
     * As {@link #read(int, long, long, WritableByteChannel, boolean)}, for a reader that gives up at {@code deadline}
     * (System.nanoTime()): a source that can abort its request there does (the object store: home/README.md, "A
     * silent store"); the others keep their own bounds (a peer's stall bound, a shared FS's read).
     */
    default void read(int p, long position, long length, WritableByteChannel sink, long deadline)
            throws IOException {
        read(p, position, length, sink, true);
    }

    /** How a log line names this source (the dataset's home: its location). */
    default String name() {
        return kind();
    }

    /**
     * The most bytes one background transfer from this source should cover (fill/README.md, "Transfers by source"):
     * the fill joins up to this many bytes of consecutive ranges into one {@link #read}; a reader's ranges stay
     * exact. 0 (the default) is one fill range: a peer's reply must stay under MPJ's eager limit, and a shared FS
     * has no round trip to amortize.
     */
    default long preferredTransferBytes() {
        return 0;
    }

    /**
     * This source's own bound on background transfers in flight (fill/README.md, "Transfers by source"), or 0 (the
     * default): the governor's bound shared by every source.
     */
    default int backgroundInFlight() {
        return 0;
    }

    /** The source does not hold the bytes asked for (yet). */
    final class NotHeldException extends IOException {
        private static final long serialVersionUID = 1L;
        private final boolean filling;

        public NotHeldException(String message) {
            this(message, false);
        }

        /** @param filling the source fills that partition: the bytes will land there (ask it again later) */
        public NotHeldException(String message, boolean filling) {
            super(message);
            this.filling = filling;
        }

        /** Whether the source fills the partition, so the bytes will come from it later (README.md, prefetch). */
        public boolean filling() {
            return filling;
        }
    }

    /** The source is lost or stalled (a peer: for the rest of the job; the home: home/README.md). */
    class SourceDownException extends IOException {
        private static final long serialVersionUID = 1L;

        public SourceDownException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
