package org.fanstore.runtime.placement;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.fanstore.runtime.fetch.FetchSource;

/**
 * The partition copies on this node's disk, by partition id, and the bodies they hold as a {@link FetchSource}
 * for other ranks (object id = metadata-table entry index, which is the same on every rank because every rank
 * sorts the same namespace). Positional reads only, so any number of threads may read at once.
 *
 * <p>Whole partition files are objects too, at {@link #partitionObject} ids (far above any entry index), so
 * a peer can fill a partition it keeps in ranges (runtime/fill). Partitions are added by the fill as each is
 * complete, while readers and fetch workers use the others: an added partition is visible as held only once its
 * channel is open. A partition still being filled is served by the ranges that landed ({@link Partial}).
 */
public final class LocalPartitions implements FetchSource, AutoCloseable {
    /** First object id of whole partition files: entry indices are ints, so these never collide. */
    private static final long PARTITION_OBJECTS = 1L << 40;
    private final Map<Integer, FileChannel> channels = new ConcurrentHashMap<>();
    private final Map<Integer, Path> files = new ConcurrentHashMap<>();
    private volatile BodyIndex bodies;
    private volatile BodyCheck check;
    private volatile Partial partial;

    /** Partitions being filled: what of them can be served to peers already. */
    public interface Partial {
        /** The partition's length if it is being filled here, else {@link FetchSource#NOT_HELD}. */
        long length(int partition);

        /** The channel holding bytes [position, position + length) of the partition if they landed, else null. */
        FileChannel landed(int partition, long position, long length);

        /**
         * {@link #landed}, after bringing the bytes in first (as for a reader here) when the partition is one this
         * node stages in from the shared FS: a peer's reader then gets them from here, and the shared FS is read
         * once for both. Waits at most until the deadline ({@link System#nanoTime()}); null if they did not land.
         */
        FileChannel landedForReader(int partition, long position, long length, long deadline);
    }

    /** From now on ranges that landed in partitions being filled are served too. */
    public void attach(Partial filling) {
        this.partial = filling;
    }

    /** The object id under which regular partition p's whole file is served. */
    public static long partitionObject(int partition) {
        return PARTITION_OBJECTS + partition;
    }

    public void add(int partitionId, Path file) throws IOException {
        files.put(partitionId, file);
        channels.put(partitionId, FileChannel.open(file, StandardOpenOption.READ));
    }

    /** Called once the namespace is known; until then every id is reported as not held. */
    public void attach(BodyIndex index) {
        this.bodies = index;
    }

    /** From now on a body is served to a peer only after check has passed it (see {@link BodyCheck}). */
    public void attach(BodyCheck bodyCheck) {
        this.check = bodyCheck;
    }

    public boolean holds(int partitionId) {
        return channels.containsKey(partitionId);
    }

    public Path file(int partitionId) {
        return files.get(partitionId);
    }

    public FileChannel channel(int partitionId) {
        return channels.get(partitionId);
    }

    @Override
    public long length(long id) throws IOException {
        if (id >= PARTITION_OBJECTS) {
            long partition = id - PARTITION_OBJECTS;
            FileChannel ch = partition <= Integer.MAX_VALUE ? channels.get((int) partition) : null;
            Partial f = partial;
            return ch != null ? ch.size() : f != null && partition <= Integer.MAX_VALUE ? f.length((int) partition)
                    : NOT_HELD;
        }
        BodyIndex b = bodies;
        if (b == null || id < 0 || id >= b.entries() || !holds(b.partition((int) id))) {
            return NOT_HELD;
        }
        BodyCheck c = check;
        if (c != null) {
            c.verify((int) id);   // throws when the body is bad: the peer is refused and tries elsewhere
        }
        return b.storedLength((int) id);
    }

    @Override
    public void read(long id, long position, ByteBuffer dst) throws IOException {
        int partition;
        long at;
        if (id >= PARTITION_OBJECTS) {
            partition = (int) (id - PARTITION_OBJECTS);
            at = position;
        } else {
            BodyIndex b = bodies;
            partition = b.partition((int) id);
            at = b.bodyOffset((int) id) + position;
        }
        FileChannel ch = channels.get(partition);
        if (ch == null && id >= PARTITION_OBJECTS) {
            Partial f = partial;
            ch = f == null ? null : f.landed(partition, at, dst.remaining());
            if (ch == null) {
                throw new IOException("bytes " + at + ".." + (at + dst.remaining()) + " of partition " + partition
                        + " have not landed here");
            }
        }
        while (dst.hasRemaining()) {
            int n = ch.read(dst, at);
            if (n < 0) {
                throw new EOFException("partition " + files.get(partition) + " ends inside object " + id);
            }
            at += n;
        }
    }

    @Override
    public boolean holds(long id, long position, long length, boolean reader) {
        if (id < PARTITION_OBJECTS || id - PARTITION_OBJECTS > Integer.MAX_VALUE
                || channels.containsKey((int) (id - PARTITION_OBJECTS))) {
            return true;
        }
        Partial f = partial;
        int p = (int) (id - PARTITION_OBJECTS);
        return f != null && (reader ? f.landedForReader(p, position, length, System.nanoTime() + READER_WAIT_NANOS)
                : f.landed(p, position, length)) != null;
    }

    @Override
    public void close() throws IOException {
        for (FileChannel ch : channels.values()) {
            ch.close();
        }
        channels.clear();
    }
}
