package org.fanstore.runtime.placement;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import org.fanstore.runtime.mpi.FetchSource;

/**
 * The partition copies on this node's disk, by partition id, and the bodies they hold as a {@link FetchSource}
 * for other ranks (object id = metadata-table entry index, which is the same on every rank because every rank
 * sorts the same namespace). Positional reads only, so any number of threads may read at once.
 */
public final class LocalPartitions implements FetchSource, AutoCloseable {
    private final Map<Integer, FileChannel> channels = new HashMap<>();
    private final Map<Integer, Path> files = new HashMap<>();
    private volatile BodyIndex bodies;

    public void add(int partitionId, Path file) throws IOException {
        channels.put(partitionId, FileChannel.open(file, StandardOpenOption.READ));
        files.put(partitionId, file);
    }

    /** Called once the namespace is known; until then every id is reported as not held. */
    public void attach(BodyIndex index) {
        this.bodies = index;
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
    public long length(long id) {
        BodyIndex b = bodies;
        if (b == null || id < 0 || id >= b.entries() || !holds(b.partition((int) id))) {
            return NOT_HELD;
        }
        return b.storedLength((int) id);
    }

    @Override
    public void read(long id, long position, ByteBuffer dst) throws IOException {
        BodyIndex b = bodies;
        int entry = (int) id;
        FileChannel ch = channels.get(b.partition(entry));
        long at = b.bodyOffset(entry) + position;
        while (dst.hasRemaining()) {
            int n = ch.read(dst, at);
            if (n < 0) {
                throw new EOFException("partition " + files.get(b.partition(entry)) + " ends inside entry " + id);
            }
            at += n;
        }
    }

    @Override
    public void close() throws IOException {
        for (FileChannel ch : channels.values()) {
            ch.close();
        }
        channels.clear();
    }
}
