package org.fanstore.runtime.output;

import static org.fanstore.runtime.shm.ControlFileDescriptor.*;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.fanstore.runtime.cache.DiskFull;
import org.fanstore.runtime.layout.RankDirectory;
import org.fanstore.runtime.shm.OwnerLiveness;
import org.fanstore.runtime.shm.Request;
import org.fanstore.runtime.shm.Responder;

/**
 * The node side of writes: answers the shim's output operations (CREATE, RELEASE, HOLD, UNLINK, RENAME, MKDIR,
 * RMDIR, and OPEN of a committed output). Staging files are made in this rank's staging directory; a commit
 * goes through the {@link OutputCommitter}, which may block (the cluster one waits for the owner rank), so every
 * operation runs on a worker, never on the dispatcher. A sweeper deletes files whose writers all died.
 */
public final class OutputService implements AutoCloseable {
    private static final int O_ACCMODE = 3;
    private static final int O_CREAT = 0100;
    private static final int O_EXCL = 0200;
    private static final int O_TRUNC = 01000;
    private static final int S_IFREG = 0100000;
    private static final int S_IFDIR = 0040000;
    private static final long SWEEP_MS = 500;
    /** RELEASE flag: the shim could not open the file; drop it instead of committing. */
    private static final int RELEASE_DISCARD = 1;

    private final LocalOutputNamespace namespace;
    private final OutputCommitter committer;
    private final OutputData data;
    private final Path stagingDir;
    private final int rank;
    private final ExecutorService workers;
    private final Duration timeout;
    private final OutputHandles handles = new OutputHandles();
    private final ScheduledExecutorService sweeper;

    public OutputService(final LocalOutputNamespace namespace, final OutputCommitter committer, final OutputData data,
                         final Path stagingDir, final int rank, final ExecutorService workers, final Duration timeout) {
        this.namespace = namespace;
        this.committer = committer;
        this.data = data;
        this.stagingDir = stagingDir;
        this.rank = rank;
        this.workers = workers;
        this.timeout = timeout;
        this.sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
            final Thread t = new Thread(r, "fanstore-output-sweep");
            t.setDaemon(true);
            return t;
        });
        sweeper.scheduleWithFixedDelay(this::sweep, SWEEP_MS, SWEEP_MS, TimeUnit.MILLISECONDS);
    }

    /** Whether this service answers the request (output operations, and OPEN of no table entry). */
    /** Whether {@code request} (one this service serves) opens a file: CREATE, or OPEN of a committed output. */
    public static boolean opensAFile(final Request request) {
        return request.op() == OP_OPEN || request.op() == OP_CREATE;
    }

    public static boolean serves(final Request request) {
        return request.op() != OP_OPEN || request.entryIndex() == ENTRY_NONE;
    }

    /** Hands the request to a worker; never blocks the caller. */
    public void handle(final Request request, final Responder responder) {
        try {
            workers.execute(() -> {
                try {
                    run(request, responder);
                } catch (final IOException | RuntimeException e) {
                    responder.error(Errnos.EIO);
                }
            });
        } catch (final RejectedExecutionException e) {
            responder.error(Errnos.EIO);
        }
    }

    private void run(final Request r, final Responder responder) throws IOException {
        final int pid = (int)r.argument();
        switch (r.op()) {
            case OP_OPEN -> openCommitted(r.source(), responder);
            case OP_CREATE -> create(r.source(), r.flags(), r.entryIndex(), pid, responder);
            case OP_HOLD -> answer(responder, handles.hold(r.entryIndex(), pid) ? 0 : Errnos.EBADF);
            case OP_RELEASE -> release(r.entryIndex(), pid, (r.flags() & RELEASE_DISCARD) != 0, responder);
            case OP_UNLINK -> answer(responder, commit(record(OutputRecord.Kind.UNLINK, r.source(), null, 0, false)));
            case OP_RMDIR -> answer(responder, commit(record(OutputRecord.Kind.RMDIR, r.source(), null, 0, false)));
            case OP_MKDIR -> answer(responder, commit(record(OutputRecord.Kind.DIR, r.source(), null,
                    S_IFDIR | (r.entryIndex() & 07777), true)));
            case OP_RENAME -> answer(responder, commit(record(OutputRecord.Kind.RENAME, r.source(), r.target(), 0,
                    false)));
            default -> responder.error(Errnos.EINVAL);
        }
    }

    private static OutputRecord record(final OutputRecord.Kind kind, final byte[] key, final byte[] target,
                                       final int mode, final boolean exclusive) {
        return new OutputRecord(kind, key, target, 0, mode, System.currentTimeMillis() * 1_000_000L, -1, 0,
                exclusive);
    }

    private int commit(final OutputRecord r) {
        return committer.commit(r, timeout);
    }

    private static void answer(final Responder responder, final int errno) {
        if (errno == 0) {
            responder.ok(0, null);
        } else {
            responder.error(errno);
        }
    }

    private void openCommitted(final byte[] key, final Responder responder) throws IOException {
        final Optional<OutputRecord> r = namespace.lookup(key);
        if (r.isEmpty()) {
            responder.error(Errnos.ENOENT);
            return;
        }
        if (LocalOutputNamespace.isDir(r.get().mode())) {
            responder.error(Errnos.EISDIR);
            return;
        }
        responder.ok(data.readable(r.get(), timeout).toString().getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A staging file for key. Checked against this rank's view first (the owner checks again at commit: two
     * ranks may race). An existing output is copied in unless O_TRUNC (copy-on-write: readers keep the old one
     * until the new one commits).
     */
    private void create(final byte[] key, final int flags, final int mode, final int pid, final Responder responder)
        throws IOException {
        final boolean exclusive = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
        final Optional<OutputRecord> existing = namespace.lookup(key);
        if (existing.isEmpty() && (flags & O_CREAT) == 0) {
            final int errno = namespace.check(record(OutputRecord.Kind.FILE, key, null, S_IFREG, false));
            responder.error(errno != 0 ? errno : Errnos.ENOENT);
            return;
        }
        final int errno = namespace.check(record(OutputRecord.Kind.FILE, key, null, S_IFREG, exclusive));
        if (errno != 0) {
            responder.error(errno);
            return;
        }
        final OutputHandles.Handle h = handles.open(key, S_IFREG | (mode & 07777), exclusive, pid);
        final Path file = RankDirectory.STAGING_FILE.in(stagingDir, OutputObjects.ofHandle(h.id()));
        try {
            // The caller's mode (plus owner rw, so the writer can write): fchmod on the descriptor (tar, cp -p)
            // changes it before the commit, which takes the mode from the file.
            Files.createFile(file, PosixFilePermissions.asFileAttribute(permissions(h.mode() | 0600)));
            if (existing.isPresent() && (flags & O_TRUNC) == 0 && (flags & O_ACCMODE) != 0) {
                copy(data.readable(existing.get(), timeout), file);
            }
        } catch (final IOException e) {
            handles.release(h.id(), pid);
            Files.deleteIfExists(file);
            responder.error(DiskFull.causedBy(e) ? Errnos.ENOSPC : Errnos.EIO);
            return;
        }
        responder.ok(h.id(), file.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static Set<PosixFilePermission> permissions(final int mode) {
        final Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
        final PosixFilePermission[] all = PosixFilePermission.values();  // OWNER_READ .. OTHERS_EXECUTE = 0400..0001
        for (int i = 0; i < all.length; i++) {
            if ((mode & (0400 >> i)) != 0) {
                set.add(all[i]);
            }
        }
        return set;
    }

    private static int bits(final Set<PosixFilePermission> set) {
        int mode = 0;
        for (final PosixFilePermission p : set) {
            mode |= 0400 >> p.ordinal();
        }
        return mode;
    }

    private static void copy(final Path from, final Path to) throws IOException {
        try (InputStream in = Files.newInputStream(from);
             OutputStream out = Files.newOutputStream(to, StandardOpenOption.WRITE)) {
            in.transferTo(out);
        }
    }

    private void release(final int id, final int pid, final boolean discard, final Responder responder)
        throws IOException {
        final OutputHandles.Handle h = handles.release(id, pid);
        if (h == null) {
            responder.ok(0, null);  // others still hold it (or it ended already)
            return;
        }
        final Path file = RankDirectory.STAGING_FILE.in(stagingDir, OutputObjects.ofHandle(h.id()));
        final int errno;
        if (discard) {
            errno = 0;
            Files.deleteIfExists(file);
        } else if (!Files.exists(file)) {
            errno = Errnos.EIO;
        } else {
            final int mode = S_IFREG | bits(Files.getPosixFilePermissions(file));
            // Read-only before it is published: a reader's descriptor cannot be reopened for writing.
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--r--r--"));
            final long mtime = Files.getLastModifiedTime(file).toInstant().toEpochMilli() * 1_000_000L;
            errno = commit(new OutputRecord(OutputRecord.Kind.FILE, h.key(), null, Files.size(file), mode, mtime,
                    rank, OutputObjects.ofHandle(h.id()), h.exclusive()));
        }
        if (errno != 0) {
            Files.deleteIfExists(file);
        }
        answer(responder, errno);
    }

    private void sweep() {
        try {
            for (final OutputHandles.Handle h : handles.sweep(OwnerLiveness::isAlive)) {
                Files.deleteIfExists(RankDirectory.STAGING_FILE.in(stagingDir, OutputObjects.ofHandle(h.id())));
            }
        } catch (final IOException | RuntimeException e) {
            System.err.println("fanstore rank " + rank + ": output sweep: " + e.getMessage());
        }
    }

    /** Keys of files still being written (a job that ends with them open reports them). */
    public java.util.List<String> stillOpen() {
        return handles.open().stream().map(h -> new String(h.key(), StandardCharsets.UTF_8)).toList();
    }

    @Override
    public void close() {
        sweeper.shutdownNow();
    }
}
