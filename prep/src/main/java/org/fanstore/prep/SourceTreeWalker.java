package org.fanstore.prep;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import org.fanstore.prep.format.DatasetPaths;
import org.fanstore.prep.format.FileModes;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PathBytes;

/**
 * Finds what prep packs: every directory, regular file and symlink under the input root (or those named by a
 * --file-list, with their parent directories), keyed by dataset path bytes in unsigned byte order. Never
 * follows a symlink; refuses one whose target leaves the dataset; skips sockets, FIFOs and devices with a
 * warning; refuses unreadable files and directories unless told to skip them.
 */
final class SourceTreeWalker {
    private static final String ATTRIBUTES = "unix:mode,uid,gid,size,lastModifiedTime";

    private final Path root;
    private final byte[] rootBytes;
    private final boolean skipUnreadable;
    private final Consumer<String> warnings;
    private final int threads;
    private final List<String> pendingWarnings = new ArrayList<>();
    private final NavigableMap<byte[], SourceEntry> found = new TreeMap<>(Arrays::compareUnsigned);

    SourceTreeWalker(final Path root, final boolean skipUnreadable, final Consumer<String> warnings,
        final int threads) {
        this.threads = threads;
        this.root = root;
        this.rootBytes = NativePaths.bytesOf(root);
        this.skipUnreadable = skipUnreadable;
        this.warnings = warnings;
    }

    /** Walks the whole tree. */
    NavigableMap<byte[], SourceEntry> walkAll() throws IOException, PrepException {
        final SourceEntry top = stat(new byte[0], root, true);
        found.put(top.path(), top);
        walkBelow(top);
        return reportWarnings();
    }

    /** Packs only the paths listed in {@code listFile} (one per line; a listed directory brings its subtree). */
    NavigableMap<byte[], SourceEntry> walkList(final Path listFile) throws IOException, PrepException {
        final SourceEntry top = stat(new byte[0], root, true);
        found.put(top.path(), top);
        final byte[] list = Files.readAllBytes(listFile);
        int lineNumber = 0;
        int start = 0;
        for (int i = 0; i <= list.length; i++) {
            if (i < list.length && list[i] != '\n') {
                continue;
            }
            lineNumber++;
            final byte[] line = Arrays.copyOfRange(list, start, i);
            start = i + 1;
            if (line.length > 0) {
                addListed(listFile, lineNumber, line);
            }
        }
        return reportWarnings();
    }

    private void addListed(final Path listFile, final int lineNumber, final byte[] line)
        throws IOException, PrepException {
        byte[] relative = line;
        if (line[0] == '/') {
            final byte[] prefix = Arrays.copyOf(rootBytes, rootBytes.length + 1);
            prefix[rootBytes.length] = '/';
            if (line.length < prefix.length || Arrays.compare(line, 0, prefix.length, prefix, 0, prefix.length) != 0) {
                throw new PrepException(listFile + ":" + lineNumber + ": " + PathBytes.display(line) +
                    " is not inside --input " + root + ": list paths relative to it or absolute inside it");
            }
            relative = Arrays.copyOfRange(line, prefix.length, line.length);
        }
        final byte[] normalized = DatasetPaths.normalizeRelative(relative);
        if (normalized == null) {
            throw new PrepException(listFile + ":" + lineNumber + ": " + PathBytes.display(line) +
                " uses '..': list paths inside --input " + root);
        }
        if (normalized.length == 0 || found.containsKey(normalized)) {
            return;
        }
        byte[] ancestor = PathBytes.parent(normalized);
        while (ancestor.length > 0 && !found.containsKey(ancestor)) {
            final SourceEntry dir = stat(ancestor, absolute(ancestor), false);
            found.put(ancestor, dir);
            ancestor = PathBytes.parent(ancestor);
        }
        final SourceEntry entry;
        try {
            entry = stat(normalized, absolute(normalized), false);
        } catch (final NoSuchFileException e) {
            throw new PrepException(listFile + ":" + lineNumber + ": " + absolute(normalized) +
                " does not exist: fix the list or the input");
        }
        if (entry != null) {
            found.put(normalized, entry);
            if (entry.isDir()) {
                walkBelow(entry);
            }
        }
    }

    private Path absolute(final byte[] relative) {
        return relative.length == 0 ? root : NativePaths.pathOf(PathBytes.child(rootBytes, relative));
    }

    /**
     * Lists {@code top}'s subtree with the walker's threads, one task per directory (listing and lstat are
     * syscall-bound, so this scales with cores); results are merged into the sorted map afterwards, so the
     * outcome does not depend on the thread count.
     */
    private void walkBelow(final SourceEntry top) throws IOException, PrepException {
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
            final Thread t = new Thread(r, "fanstore-prep-walker");
            t.setDaemon(true);
            // a worker that dies outside a task (the pool's own locks, when the heap ran out) fails the walk
            // instead of printing its own line: the walk's failure is said once, by the command
            t.setUncaughtExceptionHandler((thread, e) -> fail(failure, e));
            return t;
        });
        final Queue<SourceEntry> results = new ConcurrentLinkedQueue<>();
        final AtomicInteger pendingDirs = new AtomicInteger();
        final CountDownLatch done = new CountDownLatch(1);
        try {
            listLater(pool, top, results, failure, pendingDirs, done);
            done.await();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while walking " + absolute(top.path()));
        } finally {
            pool.shutdownNow();
        }
        final Throwable e = failure.get();
        if (e instanceof Error error) {
            throw error;
        }
        if (e instanceof PrepException p) {
            throw p;
        }
        if (e instanceof IOException io) {
            throw io;
        }
        if (e != null) {
            throw new IllegalStateException("walking " + absolute(top.path()) + " failed", e);
        }
        for (final SourceEntry entry : results) {
            found.putIfAbsent(entry.path(), entry);
        }
    }

    private void listLater(final ExecutorService pool, final SourceEntry dir, final Queue<SourceEntry> results,
        final AtomicReference<Throwable> failure, final AtomicInteger pendingDirs, final CountDownLatch done) {
        pendingDirs.incrementAndGet();
        pool.execute(() -> {
            try {
                if (failure.get() == null) {
                    for (final SourceEntry child : list(dir)) {
                        results.add(child);
                        if (child.isDir()) {
                            listLater(pool, child, results, failure, pendingDirs, done);
                        }
                    }
                }
            } catch (final Exception | Error e) {
                // an Error too (a heap too small for the tree): a directory whose listing died must fail the walk,
                // never leave the dataset without its files
                fail(failure, e);
            } finally {
                if (pendingDirs.decrementAndGet() == 0) {
                    done.countDown();
                }
            }
        });
    }

    /** Records the walk's failure: the first one, unless a later one says the heap ran out (what to act on). */
    static void fail(final AtomicReference<Throwable> failure, final Throwable e) {
        failure.accumulateAndGet(e, (first, next) ->
            first == null || next instanceof OutOfMemoryError && !(first instanceof OutOfMemoryError) ? next : first);
    }

    private List<SourceEntry> list(final SourceEntry dir) throws IOException, PrepException {
        final List<SourceEntry> children = new ArrayList<>();
        final Path source = absolute(dir.path());
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(source)) {
            for (final Path child : stream) {
                final byte[] path = PathBytes.child(dir.path(), NativePaths.bytesOf(child.getFileName()));
                final SourceEntry entry = stat(path, child, false);
                if (entry != null) {
                    children.add(entry);
                }
            }
        } catch (final AccessDeniedException e) {
            unreadable(source, "directory");
        }
        return children;
    }

    /** lstat of one path; null when it is skipped (special file, or unreadable with --skip-unreadable). */
    private SourceEntry stat(final byte[] path, final Path source, final boolean followLinks)
        throws IOException, PrepException {
        final Map<String, Object> a = followLinks ? Files.readAttributes(source, ATTRIBUTES) :
            Files.readAttributes(source, ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
        final int mode = (Integer)a.get("mode");
        final Instant mtime = ((FileTime)a.get("lastModifiedTime")).toInstant();
        final int kind = FileModes.type(mode);
        final int type;
        long size = (Long)a.get("size");
        byte[] target = null;
        switch (kind) {
            case FileModes.S_IFREG -> {
                type = PartitionDescriptor.TYPE_FILE;
                // Asking the kernel (access(2)) costs a syscall per file; a world-readable file needs no asking.
                if ((mode & 0004) == 0 && !Files.isReadable(source)) {
                    unreadable(source, "file");
                    return null;
                }
            }
            case FileModes.S_IFDIR -> type = PartitionDescriptor.TYPE_DIRECTORY;
            case FileModes.S_IFLNK -> {
                type = PartitionDescriptor.TYPE_SYMLINK;
                target = NativePaths.bytesOf(Files.readSymbolicLink(source));
                if (DatasetPaths.resolveLink(PathBytes.parent(path), target) == null) {
                    throw new PrepException("symlink " + source + " points outside the input (target " +
                        new String(target, StandardCharsets.UTF_8) + "): fanstore never follows links out of " +
                        "the dataset; replace it with a relative link inside " + root + " or with a copy");
                }
                size = target.length;
            }
            default -> {
                warn("skipping " + kindName(kind) + " " + source +
                    " (only regular files, directories and symlinks are packed)");
                return null;
            }
        }
        if (type == PartitionDescriptor.TYPE_DIRECTORY) {
            size = 0;
        }
        return new SourceEntry(path, type, mode, (Integer)a.get("uid"), (Integer)a.get("gid"),
            mtime.getEpochSecond(), mtime.getNano(), size, target);
    }

    private void unreadable(final Path source, final String what) throws PrepException {
        if (!skipUnreadable) {
            throw new PrepException("cannot read " + what + " " + source + ": fix its permissions or pass " +
                "--skip-unreadable to leave it out");
        }
        warn("skipping unreadable " + what + " " + source);
    }

    private void warn(final String warning) {
        synchronized (pendingWarnings) {
            pendingWarnings.add(warning);
        }
    }

    /** Warnings reach the caller sorted, after the walk, so their order does not depend on thread timing. */
    private NavigableMap<byte[], SourceEntry> reportWarnings() {
        synchronized (pendingWarnings) {
            pendingWarnings.sort(null);
            pendingWarnings.forEach(warnings);
            pendingWarnings.clear();
        }
        return found;
    }

    private static String kindName(final int kind) {
        return switch (kind) {
            case 0010000 -> "FIFO";
            case 0140000 -> "socket";
            case 0020000 -> "character device";
            case 0060000 -> "block device";
            default -> "special file";
        };
    }
}
