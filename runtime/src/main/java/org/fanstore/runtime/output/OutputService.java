package org.fanstore.runtime.output;

import static org.fanstore.prep.format.FileModes.S_IFDIR;
import static org.fanstore.runtime.timing.Timing.*;
import static org.fanstore.runtime.shm.ControlFileDescriptor.*;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.fanstore.prep.format.FileModes;
import org.fanstore.runtime.shm.Request;
import org.fanstore.runtime.shm.Responder;

/**
 * The node side of writes: answers the shim's output operations (PUBLISH, UNLINK, RENAME, MKDIR, RMDIR, and
 * OPEN of a committed output). The files themselves live in this rank's upper directory, where the shim works on
 * them natively; PUBLISH makes one visible to the other ranks. A commit goes through the {@link OutputCommitter},
 * which may block (the cluster one waits for the owner rank), so every operation runs on a worker, never on the
 * dispatcher.
 */
public final class OutputService {

    private final OutputNamespace namespace;
    private final OutputCommitter committer;
    private final OutputApplier applier;
    private final OutputData data;
    private final Path upperDir;
    private final int rank;
    private final ExecutorService workers;
    private final Duration timeout;
    private final AtomicInteger published = new AtomicInteger();
    private final Map<String, String> refused = new java.util.concurrent.ConcurrentHashMap<>();

    public OutputService(final OutputNamespace namespace, final OutputCommitter committer,
                         final OutputApplier applier, final OutputData data,
                         final Path upperDir, final int rank, final ExecutorService workers, final Duration timeout) {
        this.namespace = namespace;
        this.committer = committer;
        this.applier = applier;
        this.data = data;
        this.upperDir = upperDir;
        this.rank = rank;
        this.workers = workers;
        this.timeout = timeout;
    }

    /** Hands the request to a worker; never blocks the caller. */
    public void handle(final Request request, final Responder responder) {
        try {
            workers.execute(() -> {
                try {
                    run(request, responder);
                } catch (final IOException | RuntimeException e) {
                    System.err.println("fanstore rank " + rank + ": " + what(request) + " failed (EIO): "
                            + DirectoryDrain.describe(e));
                    responder.error(Errnos.EIO);
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                    responder.error(Errnos.EIO);
                }
            });
        } catch (final RejectedExecutionException e) {
            responder.error(Errnos.EIO);
        }
    }

    private void run(final Request r, final Responder responder) throws IOException, InterruptedException {
        switch (r.op()) {
            case OP_OPEN -> openCommitted(r.source(), responder);
            case OP_PUBLISH -> answer(responder, publish(r.source()));
            case OP_UNLINK -> answer(responder, commit(record(OutputRecord.Kind.UNLINK, r.source(), null, 0, false)));
            case OP_RENAME -> answer(responder, commit(record(OutputRecord.Kind.RENAME, r.source(), r.target(), 0,
                    false)));
            case OP_RMDIR -> answer(responder, commit(record(OutputRecord.Kind.RMDIR, r.source(), null, 0, false)));
            case OP_MKDIR -> answer(responder, commit(record(OutputRecord.Kind.DIR, r.source(), null,
                    S_IFDIR | (r.entryIndex() & 07777), true)));
            default -> responder.error(Errnos.EINVAL);  // an op this service does not serve: OpRouter sends none
        }
    }

    private static String what(final Request r) {
        final String key = new String(r.source(), StandardCharsets.UTF_8);
        return switch (r.op()) {
            case OP_OPEN -> "reading output " + key;
            case OP_PUBLISH -> "publishing output " + key;
            default -> "changing output " + key;
        };
    }

    private static OutputRecord record(final OutputRecord.Kind kind, final byte[] key, final byte[] target,
                                       final int mode, final boolean exclusive) {
        return new OutputRecord(kind, key, target, 0, mode, System.currentTimeMillis() * 1_000_000L, -1, 0,
                exclusive);
    }

    private int commit(final OutputRecord r) {
        return committer.commit(r, timeout);
    }

    private static String why(final int errno) {
        return switch (errno) {
            case Errnos.ENOENT -> "its directory was removed (ENOENT)";
            case Errnos.EISDIR -> "a directory of that name was made on another rank (EISDIR)";
            case Errnos.ENOTDIR -> "a part of its path is a file (ENOTDIR)";
            case Errnos.EROFS -> "the name is a dataset file (EROFS)";
            case Errnos.ENOSPC -> "the output journal is full (ENOSPC): fewer, larger output files fit";
            case Errnos.ENAMETOOLONG -> "its name is too long for a commit message (ENAMETOOLONG)";
            default -> "errno " + errno;
        };
    }

    private static void answer(final Responder responder, final int errno) {
        if (errno == 0) {
            responder.ok(0, null);
        } else {
            responder.error(errno);
        }
    }

    /**
     * Another rank's output for reading. Its holder may have renamed, replaced or removed it a moment before and
     * not yet applied the record that says so, or this rank not yet applied it (each hears of a change one
     * broadcast apart): a fetch the holder cannot serve is tried again, with the key's newest record, until the
     * fetch budget ends; ENOENT once the key is gone, as a local file system answers an open that lost that race.
     */
    private void openCommitted(final byte[] key, final Responder responder) throws IOException, InterruptedException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            final Optional<OutputRecord> r = namespace.lookup(key);
            if (r.isEmpty()) {
                responder.error(Errnos.ENOENT);
                return;
            }
            if (LocalOutputNamespace.isDir(r.get().mode())) {
                responder.error(Errnos.EISDIR);
                return;
            }
            try {
                responder.ok(data.readable(r.get(), timeout).toString().getBytes(StandardCharsets.UTF_8));
                return;
            } catch (final LostOutputException e) {
                responder.error(Errnos.ENOENT);  // went with a lost node: named once in the log already
                return;
            } catch (final IOException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
            Thread.sleep(OUTPUT_RETRY_MS);
        }
    }

    /**
     * Publishes {@code upper/key}: a FILE record with what the file says now, under a new object id (remote readers
     * fetch it by that id, which follows the key through renames: LocalOutputNamespace#heldFile). 0 when there is
     * no regular file to publish. From before the lstat, the applier knows the key is being published: a
     * file of another rank decided meanwhile does not delete ours, which is decided after it and wins.
     */
    int publish(final byte[] key) throws IOException {
        final Path file = upper(upperDir, key);
        if (file == null) {
            return Errnos.EINVAL;
        }
        final long id = OutputObjects.of(rank, published.incrementAndGet());
        applier.publishing(key, id);
        try {
            return publish(key, file, id);
        } finally {
            applier.notPublishing(key, id);
        }
    }

    private int publish(final byte[] key, final Path file, final long id) throws IOException {
        final Map<String, Object> a;
        try {
            a = Files.readAttributes(file, "unix:ino,mode,size,lastModifiedTime", LinkOption.NOFOLLOW_LINKS);
        } catch (final NoSuchFileException e) {
            return 0;  // gone meanwhile (unlinked or renamed): the shim publishes it again under its new name
        }
        final int mode = (Integer) a.get("mode");
        if (!FileModes.isRegular(mode)) {
            return 0;
        }
        final int parents = announceParents(key);
        namespace.publishing(id, (Long) a.get("ino"));
        final int errno = parents != 0 ? parents : commit(new OutputRecord(OutputRecord.Kind.FILE, key, null,
                (Long) a.get("size"), mode, nanos((FileTime) a.get("lastModifiedTime")), rank, id, false));
        final String k = new String(key, StandardCharsets.UTF_8);
        if (errno == 0) {
            refused.remove(k);
        } else if (errno != Errnos.EIO) {   // EIO's cause is named where it happened
            final boolean removed = nameTaken(errno) && removeUnchanged(file, a);
            if (removed) {
                removeEmptyUnknownParents(file.getParent());
            }
            if (removed) {
                refused.put(k, why(errno));
            }
            System.err.println("fanstore rank " + rank + ": output " + k + " not published: " + why(errno)
                    + (removed ? "; removed from this node" : "") + "; its writer's close fails");
        }
        return errno;
    }

    /** The cluster's namespace has something else at the name (or no parent): this node's file cannot be there. */
    private static boolean nameTaken(final int errno) {
        return errno == Errnos.EISDIR || errno == Errnos.ENOTDIR || errno == Errnos.ENOENT;
    }

    /**
     * Deletes {@code file} when it is still the version whose publish was refused ({@code a}: same inode, size and
     * mtime), as the applier deletes the loser of two ranks' files: then this node sees what the others see. A file
     * written again since stays, and its next close publishes it.
     */
    private static boolean removeUnchanged(final Path file, final Map<String, Object> a) {
        try {
            final Map<String, Object> now = Files.readAttributes(file, "unix:ino,mode,size,lastModifiedTime",
                    LinkOption.NOFOLLOW_LINKS);
            return now.get("ino").equals(a.get("ino")) && now.get("size").equals(a.get("size"))
                    && now.get("lastModifiedTime").equals(a.get("lastModifiedTime")) && Files.deleteIfExists(file);
        } catch (final IOException e) {
            return false;
        }
    }

    /**
     * After a refused file went: the empty directories above it that the cluster does not have (made here for it,
     * then removed by another rank), bottom up, so this node does not show or drain what the others removed.
     */
    private void removeEmptyUnknownParents(final Path dir) {
        for (Path d = dir; d != null && d.startsWith(upperDir) && !d.equals(upperDir); d = d.getParent()) {
            final byte[] k = upperDir.relativize(d).toString().getBytes(StandardCharsets.UTF_8);
            if (namespace.check(record(OutputRecord.Kind.DIR, k, null, 0, true)) == Errnos.EEXIST) {
                return;   // the cluster has it
            }
            try {
                Files.delete(d);
            } catch (final IOException e) {
                return;   // not empty (another file of this node), or gone
            }
        }
    }

    /**
     * Outputs whose publish was refused and which were removed from this node, with why: the job's end names them as
     * not saved (NodeRuntime.finishOutputs), unless the same name was published later.
     */
    public Map<String, String> refused() {
        return Map.copyOf(refused);
    }

    /**
     * Directories above {@code key} that other ranks do not know yet (made without a MKDIR: by a process without
     * the shim) are recorded first, top down, so the file is reachable there. 0 or the errno of a failed commit.
     */
    private int announceParents(final byte[] key) throws IOException {
        for (int i = 0; i < key.length; i++) {
            if (key[i] != '/') {
                continue;
            }
            final byte[] dir = java.util.Arrays.copyOf(key, i);
            final OutputRecord r = record(OutputRecord.Kind.DIR, dir, null, 0, true);
            if (namespace.check(r) != 0) {
                continue;   // exists already (an input or a recorded directory), or cannot be made: the FILE says
            }
            if (applier.removedElsewhere(dir)) {
                return Errnos.ENOENT;   // another rank removed it before this file was published: not made again
            }
            final Path p = upper(upperDir, dir);
            final int mode = p == null ? 0755 : (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            final int errno = commit(record(OutputRecord.Kind.DIR, dir, null, S_IFDIR | (mode & 07777), false));
            if (errno != 0 && errno != Errnos.EEXIST) {
                return errno;
            }
        }
        return 0;
    }

    /** Nanoseconds since the epoch. */
    static long nanos(final FileTime t) {
        final java.time.Instant i = t.toInstant();
        return i.getEpochSecond() * 1_000_000_000L + i.getNano();
    }

    /** {@code upper/key}, or null for a key that would leave the upper directory (the shim never sends one). */
    static Path upper(final Path upperDir, final byte[] key) {
        final String k = new String(key, StandardCharsets.UTF_8);
        if (k.isEmpty()) {
            return null;
        }
        final Path p = upperDir.resolve(k).normalize();
        return p.startsWith(upperDir) && !p.equals(upperDir) ? p : null;
    }
}
