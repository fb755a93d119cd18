package org.fanstore.runtime.slices;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.zip.CRC32C;
import org.fanstore.prep.format.WritePieces;
import org.fanstore.prep.format.table.LocalNames;
import org.fanstore.runtime.layout.RankDirectory;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.runtime.placement.BodyIndex;
import org.fanstore.runtime.placement.BodyCheck;
import org.fanstore.runtime.placement.LocalPartitions;
import org.fanstore.runtime.placement.CorruptBodyException;

/**
 * Copies this node's uncompressed files out of their partitions to {@code <files>/<key>}, where the shim opens them
 * directly (LOCAL_RAW): all of them before ready with {@code --unpack eager}; otherwise one at a time, when a program
 * needs a file of its own rather than a slice of the partition copy (mmap, fdopen, fopen: docs/slices.md), through
 * {@link #ensure}. Creating a million small files costs minutes on one disk, which is why slices are the default.
 *
 * <p>Invariant: {@code <files>/<key>} exists only complete (written under a temporary name in the same
 * directory, then renamed), so a direct open never sees a partial file. Each body's CRC32C is checked as it is
 * copied: the whole-file CRC of the partition proves only that the copy matches the manifest, and a doctored
 * manifest would let wrong bytes through; a bad body is never renamed into place (its opens get EIO).
 */
public final class Unpacker implements AutoCloseable {
    private static final int NOT_YET = 0;
    private static final int DONE = 1;
    private static final int STRIPES = 256;
    /** One direct buffer per thread that unpacks, a write piece long (WritePieces: why not larger). */
    private static final ThreadLocal<ByteBuffer> BUFFER =
            ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(WritePieces.BYTES));

    private final Path filesDir;
    private final MetadataTable table;
    private final BodyIndex bodies;
    private final LocalPartitions local;
    private final BodyCheck check;
    private final AtomicIntegerArray state;
    private final Object[] stripes = new Object[STRIPES];
    private final Set<Path> madeDirs = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    public Unpacker(Path filesDir, MetadataTable table, BodyIndex bodies, LocalPartitions local, BodyCheck check) {
        this.filesDir = filesDir;
        this.table = table;
        this.bodies = bodies;
        this.local = local;
        this.check = check;
        this.state = new AtomicIntegerArray(table.entryCount());
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Object();
        }
    }

    /** Whether key can be unpacked byte-exact under a local directory (valid UTF-8, within name limits). */
    public static boolean unpackable(byte[] key) {
        return LocalNames.unpackable(key);
    }

    /** Unpacks entry index now unless it already is; returns its path. */
    /** Where unpacked files lie. */
    public Path filesDir() {
        return filesDir;
    }

    public Path ensure(int index) throws IOException {
        Path target = filesDir.resolve(localName(table.key(index)));
        if (state.get(index) == DONE) {
            return target;
        }
        synchronized (stripes[index % STRIPES]) {
            if (state.get(index) != DONE) {
                write(index, target);
                state.set(index, DONE);
            }
        }
        return target;
    }

    /**
     * Unpacks every LOCAL_RAW entry not unpacked yet whose partition this node has a copy of; returns how many
     * entries it visited. A partition placement gives the node but --local-capacity left out has no copy: its files
     * are served as any remote file's (OpenService asks the same of a LOCAL_RAW open).
     */
    public int unpackAll() throws IOException {
        int count = 0;
        for (int i = 0; i < table.entryCount() && !closed; i++) {
            if (table.localRaw(i) && local.holds(bodies.partition(i))) {
                try {
                    ensure(i);
                } catch (CorruptBodyException logged) {
                    continue;   // BodyCheck named it in the log; the other files are still good
                }
                count++;
            }
        }
        return count;
    }

    private void write(int index, Path target) throws IOException {
        Path dir = target.getParent();
        makeDir(dir);
        Path tmp = dir.resolve(".fanstore-unpack-" + index);
        FileChannel in = local.channel(bodies.partition(index));
        long offset = bodies.bodyOffset(index);
        long length = bodies.storedLength(index);
        CRC32C crc = new CRC32C();
        ByteBuffer buf = BUFFER.get();
        try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            long done = 0;
            while (done < length) {
                buf.clear().limit((int) Math.min(buf.capacity(), length - done));
                int n = in.read(buf, offset + done);
                if (n <= 0) {
                    throw new IOException(local.file(bodies.partition(index)) + " ends inside the body of "
                            + new String(table.key(index), StandardCharsets.UTF_8));
                }
                buf.flip();
                crc.update(buf.duplicate());
                while (buf.hasRemaining()) {
                    out.write(buf);
                }
                done += n;
            }
        }
        // Readers get this very file: no write bit, so a reopen through /proc/self/fd/N for writing fails
        // (for every user but root; the shim refuses it for root too). Rename and unlink need none.
        Files.setPosixFilePermissions(tmp, RankDirectory.SERVED_FILE_PERMISSIONS);
        try {
            check.settle(index, (int) crc.getValue());
        } catch (CorruptBodyException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * Creates dir (and its parents) unless it is known to exist. A directory enters {@link #madeDirs} only
     * after it exists: marking it first let a second unpack in the same directory (the background thread and
     * an open, or two opens) skip the creation and write its temporary file into a directory not made yet.
     * Concurrent creations of the same directory are harmless: createDirectories accepts one that exists.
     */
    private void makeDir(Path dir) throws IOException {
        if (!madeDirs.contains(dir)) {
            Files.createDirectories(dir);
            madeDirs.add(dir);
        }
    }

    /** The key as a local relative path, or null when a local file system cannot hold it byte-exact. */
    private static String localName(byte[] key) {
        return LocalNames.localName(key);
    }

    @Override
    public void close() {
        closed = true;   // stops an eager unpackAll between files
    }
}
