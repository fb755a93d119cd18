package org.fanstore.runtime.output;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.fanstore.runtime.output.CrashSafeCopy.deleteQuietly;
import static org.fanstore.runtime.output.CrashSafeCopy.fsyncDirectory;
import static org.fanstore.runtime.output.CrashSafeCopy.permissions;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.fanstore.runtime.output.UpperScan.Entry;
import org.fanstore.runtime.output.UpperScan.Identity;
import org.fanstore.runtime.output.UpperScan.Kind;

/**
 * Mirrors this rank's upper directory onto the persistent output directory ({@code --output-dir}), so that the
 * directory ends up equal to the job's final namespace: files byte for byte with their modes and mtimes, symlinks,
 * directories (empty ones too), removals and renames. Rules: README.md beside this class, "The drain".
 *
 * <p>One thread runs passes; {@link #wake} asks for one, and a pass takes every wake-up pending when it starts.
 * A pass compares the upper tree with what this rank drained (key to inode, size, mtime, mode, kind). During the
 * job a regular file is copied only once it is published unchanged (the journal holds it for this rank with the
 * file's size and mtime, and that commit has settled on every rank); the final pass ({@link #finish}) copies
 * every file as it is. The namespace's lock is held while a copy lands or a deletion is decided, and the applier
 * holds it while another rank's record changes the upper and the journal, so a file another rank just replaced
 * never lands over that rank's copy, and is never deleted from the directory.
 *
 * <p>A copy is never visible half-done: {@link CrashSafeCopy} writes and checks it under a partial name, then it is
 * renamed into place and the directory fsynced.
 */
public final class DirectoryDrain implements OutputDrain, AutoCloseable {
    private static final LinkOption[] NOFOLLOW = {LinkOption.NOFOLLOW_LINKS};

    private final Path dir;
    private final Path upper;
    private final int rank;
    /** With one rank nobody else can take a name over, so no copy waits for its commit to settle. */
    private final boolean waitForSettle;
    private final OutputNamespace journal;
    private final Predicate<String> inputDir;
    /** Nanoseconds for the final pass's deadline: System::nanoTime but in tests. */
    private final LongSupplier clock;
    private final Thread thread;
    private final CrashSafeCopy copies = new CrashSafeCopy();
    /** What this rank put in the output directory, by key. Only the pass touches it (one pass at a time). */
    private final Map<String, Entry> drained = new HashMap<>();
    /** Object ids of this rank's files whose commit has settled. Guarded by {@code this}. */
    private final Set<Long> settledIds = new HashSet<>();
    /** Keys whose copy failed in the last pass, with why (logged once per reason). Only the pass touches it. */
    private final Map<String, String> failing = new HashMap<>();
    private boolean wakeups;
    private boolean stopping;
    private long copiedFiles;
    private long copiedBytes;
    private long busyNanos;

    /**
     * @param dir      the output directory
     * @param upper    this rank's upper directory
     * @param journal  this rank's view of the namespace (its lock is the applier's)
     * @param inputDir whether a key is an input directory (in the metadata table)
     */
    public DirectoryDrain(Path dir, Path upper, int rank, int worldSize, OutputNamespace journal,
                          Predicate<String> inputDir) {
        this(dir, upper, rank, worldSize, journal, inputDir, System::nanoTime);
    }

    /** As above, the final pass's deadline read on {@code clock} (nanoseconds). */
    DirectoryDrain(Path dir, Path upper, int rank, int worldSize, OutputNamespace journal,
                   Predicate<String> inputDir, LongSupplier clock) {
        this.dir = dir.toAbsolutePath().normalize();
        this.upper = upper.toAbsolutePath().normalize();
        this.rank = rank;
        this.waitForSettle = worldSize > 1;
        this.journal = journal;
        this.inputDir = inputDir;
        this.clock = clock;
        this.thread = new Thread(this::loop, "fanstore-drain");
        this.thread.setDaemon(true);
    }

    /** What the final pass found: every file of the final tree it could not save, with why, and the totals. */
    public record Report(Map<String, String> failed, long copiedFiles, long copiedBytes, long busyNanos) {
    }

    /** Starts the drain thread. */
    public DirectoryDrain start() {
        thread.start();
        return this;
    }

    @Override
    public synchronized void wake() {
        wakeups = true;
        notifyAll();
    }

    @Override
    public synchronized void settled(OutputRecord r) {
        settledIds.add(r.objectId());
        wakeups = true;
        notifyAll();
    }

    private synchronized boolean isSettled(long objectId) {
        return !waitForSettle || settledIds.contains(objectId);
    }

    private synchronized boolean stopping() {
        return stopping;
    }

    private void loop() {
        while (true) {
            synchronized (this) {
                while (!wakeups && !stopping) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (stopping) {
                    return;
                }
                wakeups = false;
            }
            try {
                pass(false, Long.MAX_VALUE);
            } catch (IOException | RuntimeException e) {
                System.err.println("fanstore rank " + rank + ": output drain pass: " + describe(e));
            }
        }
    }

    /**
     * Ends the background passes, then runs the final pass (at most {@code timeout}): every file of the upper tree,
     * published or not, unless another rank holds its key. The report names what that pass could not save.
     */
    public Report finish(Duration timeout) {
        long deadline = clock.getAsLong() + timeout.toNanos();
        synchronized (this) {
            stopping = true;
            notifyAll();
        }
        try {
            if (thread.isAlive()) {
                thread.join(Math.max(1, timeout.toMillis()));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Map<String, String> failed;
        try {
            failed = pass(true, deadline);
        } catch (IOException | RuntimeException e) {
            failed = new TreeMap<>(Map.of("", "the output directory " + dir + " could not be mirrored: "
                    + describe(e)));
        }
        synchronized (this) {
            return new Report(new TreeMap<>(failed), copiedFiles, copiedBytes, busyNanos);
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            stopping = true;
            notifyAll();
        }
    }

    /** Files copied so far (a rename in the directory is no copy). */
    synchronized long copiedFiles() {
        return copiedFiles;
    }

    /** Runs one pass now on the caller's thread (tests; the thread must not be started). */
    Map<String, String> passNow(boolean last) throws IOException {
        return pass(last, Long.MAX_VALUE);
    }

    /**
     * One pass; returns the files of the tree it could not save (only the final pass reports them: during the job
     * a later pass tries again). Stops early when the drain is stopping, unless {@code last}.
     */
    private Map<String, String> pass(boolean last, long deadline) throws IOException {
        long started = System.nanoTime();
        Map<String, String> failed = new TreeMap<>();
        try {
            TreeMap<String, Entry> now = UpperScan.scan(upper);
            // drained files gone from the upper, by identity: a file seen again under another key was renamed
            Map<Identity, Deque<String>> gone = new HashMap<>();
            for (Map.Entry<String, Entry> e : new TreeMap<>(drained).entrySet()) {
                Entry d = e.getValue();
                if (d.kind() == Kind.FILE && !now.containsKey(e.getKey())) {
                    gone.computeIfAbsent(d.identity(), i -> new ArrayDeque<>())
                            .add(e.getKey());
                }
            }
            for (Map.Entry<String, Entry> e : now.entrySet()) {  // parents before children
                if (!last && stopping()) {
                    return failed;
                }
                String key = e.getKey();
                Entry s = e.getValue();
                try {
                    switch (s.kind()) {
                        case DIR -> directory(key, s, last);
                        case LINK -> symlink(key, s);
                        case FILE -> file(key, s, gone, last, deadline, failed);
                        default -> { }  // fifos and sockets are not drained
                    }
                } catch (IOException | RuntimeException x) {
                    if (s.kind() == Kind.FILE) {
                        failed.put(key, "copy to " + dir.resolve(key) + " failed: " + describe(x));
                    } else {
                        failed.put(key, "making " + dir.resolve(key) + " failed: " + describe(x));
                    }
                }
            }
            removeGone(now, last);
        } finally {
            synchronized (this) {
                busyNanos += System.nanoTime() - started;
            }
        }
        if (!last) {
            for (Map.Entry<String, String> f : failed.entrySet()) {
                if (!f.getValue().equals(failing.get(f.getKey()))) {
                    System.err.println("fanstore rank " + rank + ": output " + f.getKey() + ": " + f.getValue()
                            + " (tried again later)");
                }
            }
            failing.clear();
            failing.putAll(failed);
        }
        return failed;
    }

    /**
     * A directory of the job: made with its mode (input directories only as parents of what is drained). With
     * several ranks, during the job only once the namespace has it as a directory: a mkdir sent to its owner is in
     * the upper before the owner decides, and a refused one is undone there by the shim; made here meanwhile, it
     * would stand over (or in the way of) the file that won the name. Never over a file of the namespace.
     */
    private void directory(String key, Entry s, boolean last) throws IOException {
        if (inputDir.test(key)) {
            return;
        }
        Optional<OutputRecord> r = journal.lookup(key.getBytes(UTF_8));
        if (r.isPresent() && r.get().kind() == OutputRecord.Kind.FILE) {
            return;  // the name is a file: this directory is a refused mkdir the shim is undoing
        }
        if (!last && waitForSettle && (r.isEmpty() || !LocalOutputNamespace.isDir(r.get().mode()))) {
            return;  // not decided yet: a later pass (or the final one) makes it
        }
        Entry d = drained.get(key);
        Path target = resolve(key);
        if (d != null && d.kind() == Kind.DIR && d.mode() == s.mode() && Files.isDirectory(target, NOFOLLOW)) {
            return;
        }
        if (Files.exists(target, NOFOLLOW) && !Files.isDirectory(target, NOFOLLOW)) {
            Files.delete(target);  // a file drained there before the key became a directory (no file of the job now)
        }
        makeParents(target.getParent());
        if (!Files.isDirectory(target, NOFOLLOW)) {
            Files.createDirectory(target);
        }
        Files.setPosixFilePermissions(target, permissions(s.mode()));
        drained.put(key, s);
    }

    private void symlink(String key, Entry s) throws IOException {
        Entry d = drained.get(key);
        if (d != null && d.sameBytes(s)) {
            return;
        }
        if (heldBy(journal.lookup(key.getBytes(UTF_8)), false)) {
            return;  // the name is another rank's file: never replaced by a link of this upper
        }
        Path target = resolve(key);
        makeParents(target.getParent());
        Path partial = copies.partial(target);
        try {
            Files.createSymbolicLink(partial, Path.of(s.linkTarget()));
            land(key, partial, target, null);
            partial = null;
        } finally {
            deleteQuietly(partial);
        }
        drained.put(key, s);
    }

    private void file(String key, Entry s, Map<Identity, Deque<String>> gone, boolean last, long deadline,
                      Map<String, String> failed) throws IOException {
        Entry d = drained.get(key);
        Path target = resolve(key);
        if (d != null && d.sameBytes(s)) {
            if (d.mode() != s.mode()) {
                Files.setPosixFilePermissions(target, permissions(s.mode()));
                drained.put(key, s);
            }
            return;
        }
        Optional<OutputRecord> r = journal.lookup(key.getBytes(UTF_8));
        if (heldBy(r, false)) {
            return;  // another rank's version: that rank drains it
        }
        Deque<String> from = gone.get(s.identity());
        if (from != null && !from.isEmpty()) {
            if (!last && waitForSettle && (r.isEmpty() || r.get().kind() != OutputRecord.Kind.FILE)) {
                return;  // a rename its owner has not decided yet (a refused one is undone in the upper)
            }
            String source = from.poll();
            if (rename(source, key, s)) {
                return;
            }
        }
        OutputRecord published = null;
        if (!last) {
            if (r.isEmpty() || r.get().kind() != OutputRecord.Kind.FILE || r.get().size() != s.size()
                    || r.get().mtimeNanos() != s.mtime() || !isSettled(r.get().objectId())) {
                return;  // not published as it is now: still being written, or its commit not settled yet
            }
            published = r.get();
        } else if (clock.getAsLong() > deadline) {
            failed.put(key, "not copied to " + target + ": the job's drain time was up");
            return;
        }
        copy(key, s, target, published);
    }

    /** Moves the drained copy of {@code source} to {@code key}; false when it is not there any more. */
    private boolean rename(String source, String key, Entry s) throws IOException {
        Path from = resolve(source);
        Path to = resolve(key);
        if (!Files.isRegularFile(from, NOFOLLOW)) {
            return false;
        }
        makeParents(to.getParent());
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        Entry moved = drained.remove(source);
        drained.put(key, s);
        if (moved == null || moved.mode() != s.mode()) {
            Files.setPosixFilePermissions(to, permissions(s.mode()));
        }
        fsyncDirectory(to.getParent());
        if (!from.getParent().equals(to.getParent())) {
            fsyncDirectory(from.getParent());
        }
        return true;
    }

    /**
     * Copies {@code upper/key} to {@code target} through a partial name. A source that changes or vanishes during
     * the copy is no failure: the copy is dropped and the next pass takes the file as it is then.
     */
    private void copy(String key, Entry s, Path target, OutputRecord published) throws IOException {
        Path source = upper.resolve(key);
        makeParents(target.getParent());
        Path partial = copies.partial(target);
        try {
            long sourceCrc;
            try {
                sourceCrc = copies.copyWithCrc(source, partial);
            } catch (IOException e) {
                if (UpperScan.changed(source, s)) {
                    return;
                }
                throw e;
            }
            if (UpperScan.changed(source, s)) {
                return;
            }
            copies.seal(partial, s.mode(), s.mtime(), s.size(), sourceCrc);
            if (!land(key, partial, target, published)) {
                return;
            }
            partial = null;
            drained.put(key, s);
            synchronized (this) {
                copiedFiles++;
                copiedBytes += s.size();
            }
        } finally {
            deleteQuietly(partial);
        }
    }

    /**
     * Renames {@code partial} over {@code target} under the namespace's lock; with {@code published}, only if the
     * journal still has that record (else another rank's newer file took the name: its holder copies that).
     */
    private boolean land(String key, Path partial, Path target, OutputRecord published) throws IOException {
        synchronized (journal) {
            if (published != null && !published.equals(journal.lookup(key.getBytes(UTF_8)).orElse(null))) {
                return false;
            }
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
        fsyncDirectory(target.getParent());
        return true;
    }

    /**
     * Drained keys gone from the upper: files and symlinks are deleted from the directory (unless the journal
     * holds the key as another rank's file, or, with several ranks during the job, still as this rank's: an unlink
     * or rename not decided yet), directories removed once empty (unless the journal has them). Only an entry of
     * the kind this rank drained is removed: what another rank put under the name since stays.
     */
    private void removeGone(Map<String, Entry> now, boolean last) {
        List<String> keys = new ArrayList<>(new TreeMap<>(drained).descendingKeySet());  // children first
        for (String key : keys) {
            Entry d = drained.get(key);
            Entry s = now.get(key);
            if (s != null && (s.kind() == d.kind() || (s.kind() == Kind.DIR && inputDir.test(key)))) {
                continue;
            }
            if (s != null && d.kind() != Kind.DIR) {
                continue;  // replaced by another kind: the directory or symlink has been made over it already
            }
            try {
                Path target = resolve(key);
                synchronized (journal) {
                    if (Files.exists(upper.resolve(key), NOFOLLOW) && s == null) {
                        continue;  // back meanwhile: the next pass looks at it
                    }
                    Optional<OutputRecord> r = journal.lookup(key.getBytes(UTF_8));
                    boolean isDirNow = Files.isDirectory(target, NOFOLLOW);
                    if (d.kind() == Kind.DIR) {
                        if (r.isPresent() && LocalOutputNamespace.isDir(r.get().mode())) {
                            continue;  // still a directory of the job (another rank has it)
                        }
                        try {
                            if (isDirNow) {  // else another rank's file took the name: not this rank's to remove
                                Files.deleteIfExists(target);
                            }
                        } catch (DirectoryNotEmptyException notYet) {
                            continue;  // removed once empty
                        }
                    } else if (heldBy(r, true) && !last && waitForSettle) {
                        continue;  // an unlink or rename its owner has not decided yet (a refused one is undone)
                    } else if (!isDirNow && !heldBy(r, false)) {
                        Files.deleteIfExists(target);  // a directory there now is another rank's
                    }
                }
                drained.remove(key);
                fsyncDirectory(target.getParent());
            } catch (IOException | RuntimeException e) {
                System.err.println("fanstore rank " + rank + ": could not remove " + dir.resolve(key)
                        + " from the output directory: " + describe(e));
            }
        }
    }

    /** Whether the journal's record is a FILE held by this rank ({@code mine}) or by another rank. */
    private boolean heldBy(Optional<OutputRecord> r, boolean mine) {
        return r.isPresent() && r.get().kind() == OutputRecord.Kind.FILE && (r.get().holderRank() == rank) == mine;
    }

    /** Makes the missing parents of a target (input directories, or ones made by another rank meanwhile). */
    private void makeParents(Path d) throws IOException {
        if (d.startsWith(dir) && !Files.isDirectory(d)) {
            Files.createDirectories(d);
        }
    }

    /** The key under the output directory; keys come from the upper tree, this only refuses an escape. */
    private Path resolve(String key) {
        Path p = dir.resolve(key).normalize();
        if (!p.startsWith(dir) || p.equals(dir)) {
            throw new IllegalArgumentException("output key '" + key + "' does not name a file under " + dir);
        }
        return p;
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
