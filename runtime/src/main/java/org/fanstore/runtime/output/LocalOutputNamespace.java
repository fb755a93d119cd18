package org.fanstore.runtime.output;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.fanstore.prep.format.FileModes;
import org.fanstore.prep.format.table.MetadataTable;

/**
 * This rank's view of the output namespace: the committed files and directories, checked against the inputs
 * (the metadata table: an input key is never changed) and mirrored into the shared-memory journal the shim
 * reads. Keys are held as ISO-8859-1 strings, a byte-exact and cheap map key.
 *
 * <p>Files this rank published are found by their object id (what remote readers fetch) under their current key in
 * this rank's upper directory: a rename moves the id with the key, an unlink or a newer FILE drops it. The files
 * themselves are the shim's (or the applier's) business.
 */
public final class LocalOutputNamespace implements OutputNamespace {
    private final MetadataTable inputs;
    private final OutputJournal journal;
    private final int rank;
    private final Path upperDir;
    /** Object id -> current key of each FILE this rank holds. */
    private final Map<Long, String> held = new HashMap<>();
    /** Object id -> the inode it was published from (a file replaced under the key is not that id's bytes). */
    private final Map<Long, Long> inodes = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, OutputRecord> entries = new HashMap<>();
    private final Map<String, Integer> children = new HashMap<>();

    public LocalOutputNamespace(final MetadataTable inputs, final OutputJournal journal, final int rank,
                                final Path upperDir) {
        this.inputs = inputs;
        this.journal = journal;
        this.rank = rank;
        this.upperDir = upperDir;
    }

    @Override
    public void publishing(final long objectId, final long inode) {
        inodes.put(objectId, inode);
    }

    /**
     * The file in the upper directory of FILE {@code objectId} held by this rank, or null when no key names it any
     * more or the file under its key is no longer the one published (replaced by another file: a reader then
     * retries with the key's newer record).
     */
    public Path heldFile(final long objectId) {
        final String key;
        synchronized (this) {
            key = held.get(objectId);
        }
        if (key == null) {
            return null;
        }
        final Path p = upperDir.resolve(new String(key.getBytes(ISO_8859_1), UTF_8));
        final Long inode = inodes.get(objectId);
        try {
            final Object now = Files.getAttribute(p, "unix:ino", LinkOption.NOFOLLOW_LINKS);
            return inode == null || inode.equals(now) ? p : null;
        } catch (final IOException e) {
            return null;
        }
    }

    static boolean isDir(final int mode) {
        return FileModes.isDirectory(mode);
    }

    @Override
    public synchronized int check(final OutputRecord r) {
        final String key = k(r.key());
        final int input = inputMode(key);
        final OutputRecord out = entries.get(key);
        if (!journal.fits(r.key().length, r.target().length)) {
            return Errnos.ENOSPC;
        }
        switch (r.kind()) {
            case FILE:
                if (r.exclusive() && (input >= 0 || out != null)) {
                    return Errnos.EEXIST;
                }
                if (input >= 0) {
                    return isDir(input) ? Errnos.EISDIR : Errnos.EROFS;
                }
                if (out != null && isDir(out.mode())) {
                    return Errnos.EISDIR;
                }
                return parentError(key);
            case DIR:
                if (input >= 0 || out != null) {
                    return Errnos.EEXIST;
                }
                return parentError(key);
            case UNLINK:
                if (input >= 0) {
                    return isDir(input) ? Errnos.EISDIR : Errnos.EROFS;
                }
                if (out == null) {
                    return notFound(key);
                }
                return isDir(out.mode()) ? Errnos.EISDIR : 0;
            case RMDIR:
                if (input >= 0) {
                    return isDir(input) ? Errnos.EROFS : Errnos.ENOTDIR;
                }
                if (out == null) {
                    return notFound(key);
                }
                if (!isDir(out.mode())) {
                    return Errnos.ENOTDIR;
                }
                return children.getOrDefault(key, 0) > 0 ? Errnos.ENOTEMPTY : 0;
            case RENAME:
                return checkRename(key, input, out, k(r.target()));
            default:
                return Errnos.EINVAL;
        }
    }

    private int checkRename(final String key, final int input, final OutputRecord from, final String target) {
        if (input >= 0) {
            return Errnos.EROFS;
        }
        if (from == null) {
            return notFound(key);
        }
        if (inputMode(target) >= 0) {
            return Errnos.EROFS;
        }
        if (target.equals(key)) {
            return 0;
        }
        if (target.startsWith(key + "/")) {
            return Errnos.EINVAL;
        }
        final int parent = parentError(target);
        if (parent != 0) {
            return parent;
        }
        final OutputRecord to = entries.get(target);
        if (to == null) {
            return 0;
        }
        if (isDir(from.mode()) != isDir(to.mode())) {
            return isDir(to.mode()) ? Errnos.EISDIR : Errnos.ENOTDIR;
        }
        return isDir(to.mode()) && children.getOrDefault(target, 0) > 0 ? Errnos.ENOTEMPTY : 0;
    }

    @Override
    public synchronized void apply(final OutputRecord r) {
        final String key = k(r.key());
        switch (r.kind()) {
            case FILE:
            case DIR:
                final OutputRecord old = entries.get(key);
                if (r.equals(old) || (r.kind() == OutputRecord.Kind.DIR && old != null)) {
                    return;  // idempotent: applied already
                }
                put(key, r);
                break;
            case UNLINK:
            case RMDIR:
                remove(key);
                break;
            case RENAME:
                move(key, k(r.target()));
                break;
            default:
                throw new IllegalArgumentException("unknown record " + r);
        }
        if (!journal.append(r)) {
            // check() keeps room for every record it accepts; reaching this means a caller skipped it.
            throw new IllegalStateException("output journal full: " + journal.path());
        }
    }

    @Override
    public synchronized Optional<OutputRecord> lookup(final byte[] key) {
        return Optional.ofNullable(entries.get(k(key)));
    }

    /** The FILE records whose bytes a rank matching {@code holder} holds (after a node loss: what went with it). */
    public synchronized List<OutputRecord> filesHeldBy(final java.util.function.IntPredicate holder) {
        final List<OutputRecord> files = new ArrayList<>();
        for (final OutputRecord r : entries.values()) {
            if (r.kind() == OutputRecord.Kind.FILE && holder.test(r.holderRank())) {
                files.add(r);
            }
        }
        return files;
    }

    /** Moves key and everything below it to target, replacing what target held. */
    private void move(final String key, final String target) {
        if (key.equals(target)) {
            return;
        }
        final List<String> moving = new ArrayList<>();
        final String below = key + "/";
        for (final String e : entries.keySet()) {
            if (e.equals(key) || e.startsWith(below)) {
                moving.add(e);
            }
        }
        moving.sort(null);  // parents before children, so counts stay right
        final List<OutputRecord> records = new ArrayList<>();
        for (int i = moving.size() - 1; i >= 0; i--) {
            records.add(0, remove(moving.get(i)));
        }
        remove(target);
        for (int i = 0; i < moving.size(); i++) {
            final String to = target + moving.get(i).substring(key.length());
            final OutputRecord r = records.get(i);
            put(to, new OutputRecord(r.kind(), to.getBytes(ISO_8859_1), null, r.size(), r.mode(), r.mtimeNanos(),
                    r.holderRank(), r.objectId(), false));
        }
    }

    private void put(final String key, final OutputRecord r) {
        final OutputRecord old = entries.put(key, r);
        if (old == null) {
            children.merge(parent(key), 1, Integer::sum);
        } else if (isHeld(old) && old.objectId() != r.objectId() && held.remove(old.objectId(), key)) {
            inodes.remove(old.objectId());
        }
        if (isHeld(r)) {
            held.put(r.objectId(), key);
        }
    }

    private OutputRecord remove(final String key) {
        final OutputRecord r = entries.remove(key);
        if (r != null) {
            children.merge(parent(key), -1, Integer::sum);
            children.remove(key);
            if (isHeld(r) && held.remove(r.objectId(), key)) {
                inodes.remove(r.objectId());
            }
        }
        return r;
    }

    private boolean isHeld(final OutputRecord r) {
        return r.kind() == OutputRecord.Kind.FILE && r.holderRank() == rank;
    }


    private int parentError(final String key) {
        final String parent = parent(key);
        if (parent.isEmpty()) {
            return 0;
        }
        final int input = inputMode(parent);
        if (input >= 0) {
            return isDir(input) ? 0 : Errnos.ENOTDIR;
        }
        final OutputRecord out = entries.get(parent);
        if (out == null) {
            return notFound(parent);
        }
        return isDir(out.mode()) ? 0 : Errnos.ENOTDIR;
    }

    /** ENOENT, or ENOTDIR when some ancestor of key is a file. */
    private int notFound(final String key) {
        for (String p = parent(key); !p.isEmpty(); p = parent(p)) {
            final int input = inputMode(p);
            final OutputRecord out = entries.get(p);
            if ((input >= 0 && !isDir(input)) || (out != null && !isDir(out.mode()))) {
                return Errnos.ENOTDIR;
            }
        }
        return Errnos.ENOENT;
    }

    /** The input's st_mode, or -1 when the key is not an input. */
    private int inputMode(final String key) {
        final int idx = inputs.lookup(key.getBytes(ISO_8859_1));
        return idx < 0 ? -1 : inputs.mode(idx);
    }

    static String parent(final String key) {
        final int slash = key.lastIndexOf('/');
        return slash < 0 ? "" : key.substring(0, slash);
    }

    private static String k(final byte[] key) {
        return new String(key, ISO_8859_1);
    }
}
