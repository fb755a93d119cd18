package org.fanstore.runtime.fill.source;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionFiles;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.PartitionReader;

/**
 * The partition files in the dataset directory on the shared file system: one descriptor per partition, opened on
 * first use after a check that it is a regular file of the manifest's size (a FIFO would block, {@code /dev/zero}
 * never ends), then positional range reads only. Never a per-sample open or stat on the shared FS.
 */
public final class SharedFsSource implements HomeSource {
    private static final int BUFFER = 1 << 20;
    private static final ThreadLocal<ByteBuffer> BUFFERS = ThreadLocal.withInitial(() ->
            ByteBuffer.allocateDirect(BUFFER));

    private final Path dataset;
    private final IntFunction<PartitionInfo> infos;
    private final Map<Integer, FileChannel> open = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** @param infos partition id (regular p, or -1-i for broadcast i) to its manifest line */
    public SharedFsSource(Path dataset, IntFunction<PartitionInfo> infos) {
        this.dataset = dataset;
        this.infos = infos;
    }

    @Override
    public String kind() {
        return "sharedfs";
    }

    /**
     * Opens partition p's file now and checks its fixed header against the manifest (the partitions this rank is
     * responsible for, at start: one small read each): a missing, foreign or damaged file is refused before the
     * command starts. The bodies are checked as they land (whole-file and per-body CRC32C).
     */
    @Override
    public void check(int p) throws IOException {
        FileChannel c = channel(p);
        PartitionInfo info = infos.apply(p);
        PartitionReader.Header h = PartitionReader.checkHeader(file(p), c);
        if (h.entryCount() != info.entries() || h.index() != info.index() || h.broadcast() != info.broadcast()) {
            throw new IOException(String.format("partition %s in %s holds %d entries as %s partition %d, the"
                    + " manifest says %d entries as %s partition %d; run fanstore verify %s", info.fileName(), dataset,
                    h.entryCount(), kind(h.broadcast()), h.index(), info.entries(), kind(info.broadcast()),
                    info.index(), dataset));
        }
    }

    private static String kind(boolean broadcast) {
        return broadcast ? "broadcast" : "regular";
    }

    @Override
    public void read(int p, long position, long length, WritableByteChannel sink, boolean forReader)
            throws IOException {
        FileChannel in = channel(p);
        ByteBuffer buf = BUFFERS.get();
        long done = 0;
        while (done < length) {
            buf.clear().limit((int) Math.min(buf.capacity(), length - done));
            int n;
            try {
                n = in.read(buf, position + done);
            } catch (IOException e) {
                throw new IOException("reading " + file(p) + " at byte " + (position + done) + " failed: "
                        + e.getMessage() + "; check the shared file system", e);
            }
            if (n < 0) {
                throw new IOException(file(p) + " ends at byte " + (position + done) + ", the manifest says "
                        + infos.apply(p).bytes() + "; it changed after prep: run fanstore verify " + dataset);
            }
            buf.flip();
            while (buf.hasRemaining()) {
                sink.write(buf);
            }
            done += n;
        }
    }

    private Path file(int p) {
        return dataset.resolve(infos.apply(p).fileName());
    }

    private FileChannel channel(int p) throws IOException {
        FileChannel c = open.get(p);
        if (c != null) {
            return c;
        }
        synchronized (this) {
            c = open.get(p);
            if (c != null) {
                return c;
            }
            if (closed) {
                throw new IOException("the job is ending");
            }
            PartitionInfo info = infos.apply(p);
            Path file = file(p);
            String notRegular = PartitionFiles.notRegular(file);
            if (notRegular != null) {
                throw new IOException("partition " + file + " " + notRegular);
            }
            try {
                c = FileChannel.open(file, StandardOpenOption.READ);
            } catch (NoSuchFileException e) {
                throw new IOException("partition " + info.fileName() + " (listed in " + Manifest.FILE_NAME
                        + ") is missing from " + dataset + ": restore it or run fanstore prep again", e);
            }
            if (c.size() != info.bytes()) {
                long size = c.size();
                c.close();
                throw new IOException(String.format("partition %s in %s is damaged: %d bytes, the manifest says %d"
                        + " bytes; run fanstore verify %s", info.fileName(), dataset, size, info.bytes(), dataset));
            }
            open.put(p, c);
            return c;
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        for (FileChannel c : open.values()) {
            try {
                c.close();
            } catch (IOException e) {
                // the job is ending: nothing is read from it any more
            }
        }
        open.clear();
    }
}
