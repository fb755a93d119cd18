package org.fanstore.runtime.output;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Applies decided records to this rank's namespace and, for records another rank originated, to this rank's upper
 * directory first (this rank's own changes were made there by the shim already):
 * <ul>
 * <li>FILE held by another rank: {@code upper/K} is deleted when it is the version this rank published, unchanged
 *   since (the other node's version replaced it: last publish wins). A file this rank is still writing (never
 *   published, or changed since its publish) stays: its close publishes it later, and it wins then. Nor is it
 *   deleted while this rank's own publish of K is under way and not applied yet (decided after this one).</li>
 * <li>UNLINK: {@code upper/K} is deleted unless it is a directory;</li>
 * <li>RENAME A to B: {@code upper/A} moves to {@code upper/B} (missing parents made 0755), else a non-directory
 *   {@code upper/B} is deleted (the other rank's file replaced it);</li>
 * <li>RMDIR: {@code upper/K} is removed if it is an empty directory; DIR: nothing.</li>
 * </ul>
 * Upper and namespace change together under the namespace's lock, which the drain holds while it decides to
 * delete from the output directory, so it never sees one without the other. The drain is woken by every record
 * this rank originated and every one that changed its upper.
 */
public final class OutputApplier {
    private final OutputNamespace namespace;
    private final Path upper;
    private final OutputDrain drain;
    private final int rank;
    /**
     * Directories another rank removed: a publish must not make one again from this upper, where a file not
     * published yet (or one created as the removal arrived) may still lie in it ({@link #removedElsewhere(byte[])}).
     * A DIR of the key, applied later, takes it out.
     */
    private final java.util.Set<String> removedElsewhere = ConcurrentHashMap.newKeySet();
    /** Keys this rank is committing a FILE of, with its object id, until the commit settles. */
    private final Map<String, Long> publishing = new ConcurrentHashMap<>();

    /** {@code upper}: this rank's upper directory, or null to leave the file system alone (tests of the commit). */
    public OutputApplier(OutputNamespace namespace, Path upper, OutputDrain drain, int rank) {
        this.namespace = namespace;
        this.upper = upper == null ? null : upper.toAbsolutePath().normalize();
        this.drain = drain;
        this.rank = rank;
    }

    public OutputNamespace namespace() {
        return namespace;
    }

    /** Whether {@code dir} of this upper was removed by another rank (its files here were then not published). */
    public boolean removedElsewhere(byte[] dir) {
        return removedElsewhere.contains(new String(dir, UTF_8));
    }

    /** Applies {@code r}, decided for {@code origin} (the rank whose shim asked for it). */
    public void apply(OutputRecord r, int origin) {
        boolean changed;
        synchronized (namespace) {
            if (r.kind() == OutputRecord.Kind.DIR) {
                removedElsewhere.remove(new String(r.key(), UTF_8));
            } else if (r.kind() == OutputRecord.Kind.RMDIR && origin != rank) {
                removedElsewhere.add(new String(r.key(), UTF_8));
            }
            changed = origin != rank && upper != null && mirror(r);
            namespace.apply(r);
        }
        if (origin == rank || changed) {
            drain.wake();
        }
    }

    /** Called by the committer before a commit this rank starts is decided. */
    public void committing(OutputRecord r) {
        if (r.kind() == OutputRecord.Kind.FILE && r.holderRank() == rank) {
            publishing(r.key(), r.objectId());
        }
    }

    /** This rank publishes {@code upper/key} as {@code objectId} (from before it reads the file). */
    public void publishing(byte[] key, long objectId) {
        publishing.put(new String(key, UTF_8), objectId);
    }

    /** The publish of {@code key} as {@code objectId} ended without a commit. */
    public void notPublishing(byte[] key, long objectId) {
        publishing.remove(new String(key, UTF_8), objectId);
    }

    /** Called by the committer once a commit this rank started has finished on every rank (or failed). */
    public void settled(OutputRecord r) {
        if (r.kind() == OutputRecord.Kind.FILE && r.holderRank() == rank) {
            publishing.remove(new String(r.key(), UTF_8), r.objectId());
            drain.settled(r);
        }
    }

    /** Whether this rank's own publish of {@code key} is under way and not applied yet: it comes later, and wins. */
    private boolean publishingLater(OutputRecord other) {
        Long mine = publishing.get(new String(other.key(), UTF_8));
        if (mine == null) {
            return false;
        }
        Optional<OutputRecord> now = namespace.lookup(other.key());
        return now.isEmpty() || now.get().holderRank() != rank || now.get().objectId() != mine;
    }

    /** Is {@code upper/K} (attributes {@code a}) the version this rank published at {@code other}'s key, unchanged? */
    private boolean publishedUnchanged(OutputRecord other, BasicFileAttributes a) {
        Optional<OutputRecord> mine = namespace.lookup(other.key());
        if (mine.isEmpty() || mine.get().kind() != OutputRecord.Kind.FILE || mine.get().holderRank() != rank) {
            return false;
        }
        long mtime = OutputService.nanos(a.lastModifiedTime());
        return a.size() == mine.get().size() && mtime == mine.get().mtimeNanos();
    }

    /** Another rank's record, on this rank's upper; whether it changed anything. Failures are logged, not fatal. */
    private boolean mirror(OutputRecord r) {
        Path key = resolve(r.key());
        if (key == null) {
            return false;
        }
        try {
            switch (r.kind()) {
                case FILE -> {
                    BasicFileAttributes a = attributes(key);
                    return r.holderRank() != rank && a != null && a.isRegularFile() && publishedUnchanged(r, a)
                            && !publishingLater(r) && Files.deleteIfExists(key);
                }
                case UNLINK -> {
                    BasicFileAttributes a = attributes(key);
                    return a != null && !a.isDirectory() && Files.deleteIfExists(key);
                }
                case RENAME -> {
                    Path target = resolve(r.target());
                    if (target == null || target.equals(key)) {
                        return false;
                    }
                    if (attributes(key) != null) {
                        makeParents(target.getParent());
                        Files.move(key, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                        return true;
                    }
                    BasicFileAttributes b = attributes(target);
                    return b != null && !b.isDirectory() && Files.deleteIfExists(target);
                }
                case RMDIR -> {
                    BasicFileAttributes a = attributes(key);
                    if (a == null || !a.isDirectory()) {
                        return false;
                    }
                    try {
                        Files.delete(key);
                        return true;
                    } catch (DirectoryNotEmptyException | NoSuchFileException e) {
                        return false;
                    }
                }
                default -> {
                    return false;
                }
            }
        } catch (IOException e) {
            System.err.println("fanstore rank " + rank + ": could not mirror another rank's " + r + " into "
                    + upper + ": " + DirectoryDrain.describe(e));
            return false;
        }
    }

    private void makeParents(Path dir) throws IOException {
        if (dir == null || dir.equals(upper) || Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        makeParents(dir.getParent());
        try {
            Files.createDirectory(dir);
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        } catch (java.nio.file.FileAlreadyExistsException raced) {
            // the shim made it meanwhile
        }
    }

    private static BasicFileAttributes attributes(Path p) throws IOException {
        try {
            return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    private Path resolve(byte[] key) {
        String k = new String(key, UTF_8);
        if (upper == null || k.isEmpty()) {
            return null;
        }
        Path p = upper.resolve(k).normalize();
        return p.startsWith(upper) && !p.equals(upper) ? p : null;
    }
}
