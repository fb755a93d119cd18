package org.fanstore.prep;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.CompletionService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

import org.fanstore.prep.format.DatasetPaths;
import org.fanstore.prep.format.FileModes;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PathBytes;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.prep.store.ObjectStore;
import org.fanstore.prep.store.StoreException;

/**
 * prep's input when it is {@code s3://BUCKET/PREFIX/}: every object under the prefix is a file of the dataset, its
 * key after the prefix its path (README.md, "From a bucket"). Listing is level by level with the '/' delimiter,
 * each common prefix a task on {@link #LIST_THREADS} threads; bodies are read by ranged GETs.
 */
final class BucketTree implements SourceFiles {
    /** LIST waits on the store (~13 ms a page on S3), not on CPU: enough in flight to hide that latency. */
    static final int LIST_THREADS = 8;
    /** Default --threads for a bucket input: the packer's readers wait on GETs, not on CPU. */
    static final int READ_THREADS = 16;
    private static final int FILE_MODE = FileModes.S_IFREG | 0644;
    private static final int DIR_MODE = FileModes.S_IFDIR | 0755;

    private final ObjectStore store;
    private final DatasetLocation tree;
    private final Consumer<String> warnings;

    BucketTree(final ObjectStore store, final DatasetLocation tree, final Consumer<String> warnings) {
        this.store = store;
        this.tree = tree;
        this.warnings = warnings;
    }

    /** The dataset's default name: the prefix's last part, or the bucket's name for a whole bucket. */
    byte[] defaultName() {
        final String key = tree.key();
        final String k = key.endsWith("/") ? key.substring(0, key.length() - 1) : key;
        return (k.isEmpty() ? tree.bucket() : k.substring(k.lastIndexOf('/') + 1)).getBytes(StandardCharsets.UTF_8);
    }

    /** Lists the tree: files, and the directories their paths imply, by path bytes (the root is ""). */
    NavigableMap<byte[], SourceEntry> walk() throws IOException, PrepException {
        final List<ObjectStore.Listed> objects = listAll();
        final int[] owner = owner();
        final NavigableMap<byte[], SourceEntry> found = new TreeMap<>(Arrays::compareUnsigned);
        final java.util.SortedSet<String> skipped = new java.util.TreeSet<>();
        final int prefixLength = tree.key().length();
        for (final ObjectStore.Listed o : objects) {
            final String relative = o.key().substring(prefixLength);
            if (relative.endsWith("/") && o.size() == 0) {
                continue;   // a "directory marker" some tools write: the directory comes from its objects anyway
            }
            final byte[] raw = relative.getBytes(StandardCharsets.UTF_8);
            final byte[] path = DatasetPaths.normalizeRelative(raw);
            if (path == null || path.length == 0 || !Arrays.equals(path, raw)) {
                skipped.add("skipping object " + url(o.key()) + ": its key after " + url(tree.key()) +
                    " is not a clean relative path (empty, '.' or '..' part)");
                continue;
            }
            final Instant m = o.lastModified() == null ? Instant.EPOCH : o.lastModified();
            found.put(path, new SourceEntry(path, PartitionDescriptor.TYPE_FILE, FILE_MODE, owner[0], owner[1],
                m.getEpochSecond(), m.getNano(), o.size(), null));
        }
        final List<byte[]> files = new ArrayList<>(found.keySet());
        for (final byte[] file : files) {
            final SourceEntry e = found.get(file);
            byte[] dir = PathBytes.parent(file);
            while (true) {
                final SourceEntry d = found.get(dir);
                if (d != null && d.isFile()) {
                    // "a" and "a/b" both exist: a directory wins, the object "a" cannot be a file as well
                    skipped.add("skipping object " + url(tree.key() + new String(dir, StandardCharsets.UTF_8)) +
                        ": other objects lie under it as a prefix");
                }
                if (d == null || d.isFile() || d.mtimeSec() < e.mtimeSec() ||
                    d.mtimeSec() == e.mtimeSec() && d.mtimeNsec() < e.mtimeNsec()) {
                    found.put(dir, new SourceEntry(dir, PartitionDescriptor.TYPE_DIRECTORY, DIR_MODE, owner[0],
                        owner[1], e.mtimeSec(), e.mtimeNsec(), 0, null));
                } else if (d.isDir()) {
                    break;   // this directory and its ancestors already carry an mtime at least as new
                }
                if (dir.length == 0) {
                    break;
                }
                dir = PathBytes.parent(dir);
            }
        }
        found.putIfAbsent(new byte[0], new SourceEntry(new byte[0], PartitionDescriptor.TYPE_DIRECTORY,
            DIR_MODE, owner[0], owner[1], 0, 0, 0, null));
        skipped.forEach(warnings);
        return found;
    }

    /** Every object under the prefix: one delimiter listing per level and prefix, on LIST_THREADS threads. */
    private List<ObjectStore.Listed> listAll() throws IOException {
        final ExecutorService pool = Executors.newFixedThreadPool(LIST_THREADS, r -> {
            final Thread t = new Thread(r, "fanstore-prep-list");
            t.setDaemon(true);
            return t;
        });
        final List<ObjectStore.Listed> all = new ArrayList<>();
        try {
            final CompletionService<ObjectStore.Level> done = new ExecutorCompletionService<>(pool);
            final String bucket = tree.bucket();
            done.submit(() -> store.listLevel(bucket, tree.key()));
            // One task per prefix; the loop ends when every submitted listing has been taken.
            for (int pending = 1; pending > 0; pending--) {
                final ObjectStore.Level level = take(done);
                all.addAll(level.objects());
                for (final String prefix : level.prefixes()) {
                    done.submit(() -> store.listLevel(bucket, prefix));
                    pending++;
                }
            }
        } finally {
            pool.shutdownNow();
        }
        if (all.isEmpty()) {
            throw new StoreException(StoreException.Reason.NO_KEY, "no objects under " + url(tree.key()) +
                ": correct --input (s3://BUCKET/PREFIX/)");
        }
        return all;
    }

    private static ObjectStore.Level take(final CompletionService<ObjectStore.Level> done) throws IOException {
        try {
            return done.take().get();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while listing the bucket");
        } catch (final ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IllegalStateException("listing the bucket failed", e.getCause());
        }
    }

    /** The user running prep owns the files (objects have no owner of their own). */
    private static int[] owner() throws IOException {
        final Path probe = Files.createTempFile("fanstore-owner", "");
        try {
            return new int[] {(Integer)Files.getAttribute(probe, "unix:uid"),
                (Integer)Files.getAttribute(probe, "unix:gid")};
        } finally {
            Files.deleteIfExists(probe);
        }
    }

    private String url(final String key) {
        return "s3://" + tree.bucket() + "/" + key;
    }

    private String keyOf(final SourceEntry entry) {
        return tree.key() + new String(entry.path(), StandardCharsets.UTF_8);
    }

    @Override
    public ReadableByteChannel open(final SourceEntry entry) {
        return new ObjectChannel(keyOf(entry), entry.size());
    }

    @Override
    public String describe(final SourceEntry entry) {
        return url(keyOf(entry));
    }

    @Override
    public boolean remote() {
        return true;
    }

    /** The object's listed bytes in order: each read() is one ranged GET of what the caller's buffer holds. */
    private final class ObjectChannel implements ReadableByteChannel {
        private final String key;
        private final long size;
        private long position;
        private boolean open = true;

        ObjectChannel(final String key, final long size) {
            this.key = key;
            this.size = size;
        }

        @Override
        public int read(final ByteBuffer dst) throws IOException {
            final int n = (int)Math.min(dst.remaining(), size - position);
            if (n <= 0) {
                return size - position <= 0 ? -1 : 0;
            }
            final ByteBuffer part = dst.slice(dst.position(), n);
            store.read(tree.bucket(), key, position, part);
            dst.position(dst.position() + n);
            position += n;
            return n;
        }

        @Override
        public boolean isOpen() {
            return open;
        }

        @Override
        public void close() {
            open = false;
        }
    }
}
