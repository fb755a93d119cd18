package org.fanstore.runtime.output;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * Copies the committed outputs this rank holds to the persistent output directory ({@code --output-dir}),
 * under their path relative to the mount, and mirrors renames and unlinks of them. One background thread works
 * through the records in the order they were applied, so a rename or unlink always follows the copy it concerns.
 *
 * <p>A copy is never visible half-done: it is written to a hidden partial name beside the target
 * ({@code .NAME.fanstore-partial-PID-N}), fsynced, re-read and compared (CRC32C and length) with the staging
 * file, then renamed into place and the directory fsynced. A crash at any point leaves at most a partial name
 * behind, never a short file under the final name (the failure UnifyFS's stage-out once had).
 *
 * <p>Another rank may commit the same path later (last commit wins): this rank is told (its file was replaced)
 * and a copy of its own still in progress then does not land. The newer holder renames its copy into place only
 * once its commit has settled, that is once every rank, the older holder included, has applied it: the older
 * holder has then either already renamed its copy (and the newer one lands over it) or sees the takeover and
 * drops its copy. Without that wait a fast copy of the newer file could land first and the older one over it.
 */
public final class DirectoryDrain implements OutputDrain, AutoCloseable {
    private static final int BUFFER_BYTES = 1 << 20;
    /** In partial names: unique across the ranks of a node and across a crashed run's leftovers. */
    private static final long PID = ProcessHandle.current().pid();
    /** A partial name: {@code .NAME.fanstore-partial-PID-N} (groups: NAME, PID). */
    private static final Pattern PARTIAL = Pattern.compile("\\.(.+)\\.fanstore-partial-([0-9]{1,10})-[0-9]+");
    /** A commit settles within its own bound (seconds); past this the copy lands anyway rather than never. */
    private static final long SETTLE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final Path dir;
    private final int rank;
    /** With one rank nobody else can take a name over, so no copy waits for its commit to settle. */
    private final boolean waitForSettle;
    private final ExecutorService worker;
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_BYTES);
    /** Per key, bumped when another rank's bytes take the name over; a copy that saw an older value does not
     * land. Guarded by {@code this}, as is the final rename that checks it. */
    private final Map<String, Long> takeovers = new HashMap<>();
    /** Keys whose latest copy failed, with why; cleared by a later successful copy, an unlink or a takeover. */
    private final Map<String, String> failed = new TreeMap<>();
    /** Keys queued or being copied, with how many copies of each are outstanding. */
    private final Map<String, Integer> pending = new HashMap<>();
    /** Object ids of this rank's files whose commit has not settled yet, and of those that have since. */
    private final Set<Long> unsettled = new HashSet<>();
    private final Set<Long> settledIds = new HashSet<>();
    private long partialSequence;
    private long copiedFiles;
    private long copiedBytes;
    private long busyNanos;
    private boolean finished;

    public DirectoryDrain(Path dir, int rank, int worldSize) {
        this.dir = dir.toAbsolutePath().normalize();
        this.rank = rank;
        this.waitForSettle = worldSize > 1;
        this.worker = Executors.newSingleThreadExecutor(task -> {
            Thread t = new Thread(task, "fanstore-drain");
            t.setDaemon(true);
            return t;
        });
    }

    /** What finish found: every key that is not on the directory as committed, with why, and the totals. */
    public record Report(Map<String, String> failed, long copiedFiles, long copiedBytes, long busyNanos) {
    }

    @Override
    public synchronized void applied(OutputRecord r, Path file) {
        if (finished) {
            return;
        }
        String key = new String(r.key(), UTF_8);
        switch (r.kind()) {
            case FILE -> {
                if (r.holderRank() == rank) {
                    long seen = takeover(key);
                    long id = r.objectId();
                    if (waitForSettle) {
                        unsettled.add(id);
                    }
                    queue(key, () -> copy(key, file, r.size(), seen, id));
                } else {
                    takeOver(key);
                }
            }
            case UNLINK -> queue(key, () -> unlink(key));
            case RENAME -> {
                String target = new String(r.target(), UTF_8);
                if (r.holderRank() == rank) {
                    long seen = takeover(target);
                    queue(target, () -> rename(key, target, seen));
                } else {
                    takeOver(target);
                }
            }
            case DIR, RMDIR -> {
                // directories are created as the parents of copied files; empty ones are not mirrored
            }
            default -> throw new IllegalArgumentException("unknown record " + r);
        }
    }

    @Override
    public synchronized void settled(OutputRecord r) {
        if (unsettled.remove(r.objectId())) {
            settledIds.add(r.objectId());
            notifyAll();
        }
    }

    /** Bounded: see SETTLE_WAIT_NANOS. */
    private synchronized void awaitSettled(long objectId) throws InterruptedException {
        long deadline = System.nanoTime() + SETTLE_WAIT_NANOS;
        while (unsettled.contains(objectId)) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                unsettled.remove(objectId);
                return;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        settledIds.remove(objectId);
    }

    private void queue(String key, Runnable task) {
        pending.merge(key, 1, Integer::sum);
        worker.execute(() -> {
            try {
                task.run();
            } finally {
                synchronized (this) {
                    pending.computeIfPresent(key, (k, n) -> n == 1 ? null : n - 1);
                }
            }
        });
    }

    private long takeover(String key) {
        return takeovers.getOrDefault(key, 0L);
    }

    private void takeOver(String key) {
        takeovers.merge(key, 1L, Long::sum);
        failed.remove(key);
    }

    private void copy(String key, Path staging, long size, long takeoverSeen, long objectId) {
        long started = System.nanoTime();
        Path target;
        Path partial = null;
        try {
            target = resolve(key);
            if (staging == null) {
                throw new NoSuchFileException("the staging file of " + key, null, "this rank has none");
            }
            Path parent = target.getParent();
            Files.createDirectories(parent);
            synchronized (this) {
                partial = parent.resolve(partialName(target.getFileName().toString(), PID, partialSequence++));
            }
            long sourceCrc = copyWithCrc(staging, partial);
            long length = Files.size(partial);
            long copyCrc = crcOf(partial);
            if (length != size || copyCrc != sourceCrc) {
                throw new IOException("the copy does not match: " + length + " bytes (CRC32C " + hex(copyCrc)
                        + ") after writing " + size + " committed bytes (CRC32C " + hex(sourceCrc) + ")");
            }
            awaitSettled(objectId);
            synchronized (this) {
                if (takeover(key) != takeoverSeen) {
                    return; // another rank's newer file owns the name now; its holder copies that
                }
                Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                partial = null;
                failed.remove(key);
            }
            fsyncDirectory(parent);
            synchronized (this) {
                copiedFiles++;
                copiedBytes += size;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail(key, "copy to " + dir.resolve(key) + " was stopped before it landed");
        } catch (IOException | RuntimeException e) {
            synchronized (this) {
                if (takeover(key) == takeoverSeen) { // else a newer file of another rank replaced it: not lost
                    fail(key, "copy to " + dir.resolve(key) + " failed: " + describe(e));
                }
            }
        } finally {
            deleteQuietly(partial);
            addBusy(started);
        }
    }

    private void rename(String source, String target, long takeoverSeen) {
        long started = System.nanoTime();
        try {
            Path from = resolve(source);
            Path to = resolve(target);
            synchronized (this) {
                String why = failed.remove(source);
                if (why != null) {
                    failed.put(target, why + " (then renamed to " + target + ")");
                    return;
                }
                if (takeover(target) != takeoverSeen || !Files.exists(from)) {
                    return; // replaced by a newer file of another rank, or the source never landed: nothing to move
                }
                Files.createDirectories(to.getParent());
                Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
            fsyncDirectory(to.getParent());
            if (!to.getParent().equals(from.getParent())) {
                fsyncDirectory(from.getParent());
            }
        } catch (IOException | RuntimeException e) {
            fail(target, "rename of " + dir.resolve(source) + " to " + dir.resolve(target) + " failed: "
                    + describe(e));
        } finally {
            addBusy(started);
        }
    }

    private void unlink(String key) {
        try {
            Path path = resolve(key);
            synchronized (this) {
                failed.remove(key);
            }
            if (Files.deleteIfExists(path)) {
                fsyncDirectory(path.getParent());
            }
        } catch (IOException | RuntimeException e) {
            fail(key, "removing " + dir.resolve(key) + " failed: " + describe(e));
        }
    }

    /**
     * Waits (at most {@code timeout}) until every queued copy is done, then stops taking records. Keys whose copy
     * failed or did not finish in time are in the report.
     */
    public Report finish(Duration timeout) {
        synchronized (this) {
            finished = true;
        }
        Future<?> drained = worker.submit(() -> { });
        worker.shutdown();
        try {
            drained.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            // reported below as not copied in time
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException cannotHappen) {
            // the marker task is empty
        }
        synchronized (this) {
            Map<String, String> all = new TreeMap<>(failed);
            for (String key : pending.keySet()) {
                all.put(key, "not copied to " + dir.resolve(key) + " within " + timeout.toSeconds()
                        + " s of the job's end");
            }
            return new Report(all, copiedFiles, copiedBytes, busyNanos);
        }
    }

    @Override
    public void close() {
        worker.shutdownNow();
    }

    private synchronized void fail(String key, String why) {
        failed.put(key, why);
    }

    private synchronized void addBusy(long started) {
        busyNanos += System.nanoTime() - started;
    }

    /** The key under the output directory; keys are normalised by the shim, this only refuses an escape. */
    private Path resolve(String key) {
        Path p = dir.resolve(key).normalize();
        if (!p.startsWith(dir) || p.equals(dir)) {
            throw new IllegalArgumentException("output key '" + key + "' does not name a file under " + dir);
        }
        return p;
    }

    private long copyWithCrc(Path from, Path to) throws IOException {
        CRC32C crc = new CRC32C();
        try (FileChannel in = FileChannel.open(from, StandardOpenOption.READ);
                FileChannel out = FileChannel.open(to, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            while (true) {
                buffer.clear();
                if (in.read(buffer) < 0) {
                    break;
                }
                buffer.flip();
                crc.update(buffer.duplicate());
                while (buffer.hasRemaining()) {
                    out.write(buffer);
                }
            }
            out.force(true);
        }
        return crc.getValue();
    }

    private long crcOf(Path file) throws IOException {
        CRC32C crc = new CRC32C();
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
            while (true) {
                buffer.clear();
                if (in.read(buffer) < 0) {
                    return crc.getValue();
                }
                buffer.flip();
                crc.update(buffer);
            }
        }
    }

    /** A rename or create is durable only once its directory is: fsync the directory itself. */
    private static void fsyncDirectory(Path directory) throws IOException {
        try (FileChannel d = FileChannel.open(directory, StandardOpenOption.READ)) {
            d.force(true);
        }
    }

    private static void deleteQuietly(Path p) {
        if (p != null) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException ignored) {
                // a leftover partial name is harmless: it is hidden and never the final name
            }
        }
    }

    static String partialName(String name, long pid, long sequence) {
        return "." + name + ".fanstore-partial-" + pid + "-" + sequence;
    }

    /**
     * The runtime pid that was copying into the partial name {@code fileName}, or -1 when it is not one: a copy
     * cut off by SIGKILL (or a crash) leaves that name, which the next job on the directory reports and removes.
     */
    public static long partialOwner(String fileName) {
        Matcher m = PARTIAL.matcher(fileName);
        return m.matches() ? Long.parseLong(m.group(2)) : -1;
    }

    /** The final name a partial name was to become ({@code NAME}); only for names {@link #partialOwner} knows. */
    public static String partialTarget(String fileName) {
        Matcher m = PARTIAL.matcher(fileName);
        if (!m.matches()) {
            throw new IllegalArgumentException(fileName + " is not a partial name");
        }
        return m.group(1);
    }

    private static String hex(long crc) {
        return String.format("%08x", crc);
    }

    /** Words for a user, not a Java class name. */
    static String describe(Exception e) {
        if (e instanceof FileSystemException f) {
            String what = f.getReason() != null ? f.getReason()
                    : e instanceof NoSuchFileException ? "no such file or directory"
                    : e instanceof NotDirectoryException ? "not a directory"
                    : e instanceof FileAlreadyExistsException ? "exists and is not a directory"
                    : e instanceof AccessDeniedException ? "permission denied"
                    : e instanceof DirectoryNotEmptyException ? "directory not empty" : "failed";
            return f.getFile() + ": " + what;
        }
        return e.getMessage() != null ? e.getMessage() : "unexpected error";
    }
}
