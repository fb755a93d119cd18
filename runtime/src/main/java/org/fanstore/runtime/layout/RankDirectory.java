package org.fanstore.runtime.layout;

import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The names of a job's directories, spelled once (contract: README.md beside this class; golden list:
 * {@code tests/vectors/layout/rank-dir.txt}; C side: {@code interpose-native/src/rank_dir.h}). The launcher, the
 * runtime, the shim and the tasks sharing a node's runtime meet only through these names, so none of them is
 * written as a literal anywhere else: {@code RankDirectory.READY.in(shmDir)}. Private temporaries and per-entry
 * names inside these directories (a fill's partial copy, a cache entry) are spelled by the class that owns them.
 *
 * <p>A pattern's {@code <...>} placeholders are filled in order by {@link #in}'s arguments.
 */
public enum RankDirectory {
    /** A job's root under a base directory (node-local storage, or /dev/shm); refused unless ours. */
    JOB_ROOT(Place.BASE, "fanstore-<uid>-<job>", Kind.DIR, 0700),
    /** One rank's directory inside a job root (the same name in the shared-memory and the local root). */
    RANK_DIR(Place.JOB, "rank-<rank>", Kind.DIR, -1),
    /** Held (fcntl lock) by the launcher that owns a rank's directories on this node; holds its pid. */
    RANK_LOCK(Place.JOB, "rank-<rank>.lock", Kind.FILE, -1),
    /** The metadata table the shim maps (format: runtime/metadata/README.md). */
    META_TABLE(Place.SHM, "meta.tbl", Kind.FILE, 0600),
    /** Written by the shim (C) once it validated meta.tbl in full; later processes of the node trust it. */
    META_SEAL(Place.SHM, "meta.tbl.valid", Kind.FILE, 0600),
    /** The shim-runtime control file (format: runtime/shm/README.md). */
    CONTROL_FILE(Place.SHM, "ctl", Kind.FILE, 0600),
    /** Remote and decompressed files materialised for opens, bounded by --cache-mb. */
    CACHE_DIR(Place.SHM, "cache", Kind.DIR, -1),
    /** One materialised file, named by its metadata-table entry index, in {@link #CACHE_DIR} or
     * {@link #LOCAL_CACHE_DIR} by its size (the shim opens it directly). */
    CACHE_FILE(Place.CACHE, "e<index>", Kind.FILE, -1),
    /**
     * A second name (hard link) of a cache file, one per runtime answer: the reader's shim opens it, then unlinks
     * it, so eviction of {@link #CACHE_FILE} can never come between the answer and the open (cache/CachePins).
     */
    CACHE_PIN(Place.CACHE, "p<index>-<pin>", Kind.FILE, -1),
    /** The cache's reference bits, one byte per table entry (format: runtime/shm/README.md). */
    CACHE_REF(Place.SHM, "cache.ref", Kind.FILE, 0600),
    /** Counts of the opens the shim serves without a request (format: runtime/stats/README.md). */
    SHIM_COUNTERS(Place.SHM, "shim.counters", Kind.FILE, 0600),
    /** Entries the shim reads straight from partition copies, and where (format: runtime/shm/README.md). */
    SLICE_MAP(Place.SHM, "slices.map", Kind.FILE, 0600),
    /** Empty; exists once the rank serves (after the world barrier): sharing tasks wait for it. */
    READY(Place.SHM, "ready", Kind.FILE, -1),
    /** Appears (atomic rename) when this rank's fill has ended; one line of counts (Fill#writeMarker). */
    PREFETCHED(Place.SHM, "prefetched", Kind.FILE, -1),
    /** The job's remote-fetch secret (32 bytes), written by the launcher, read by the runtime (mpi.JobSecret). */
    JOB_SECRET(Place.SHM, "job-secret", Kind.FILE, 0600),
    /** Where the tasks sharing this node's runtime register. */
    TASKS_DIR(Place.SHM, "tasks", Kind.DIR, -1),
    /** A sharing task's pid being written, before its atomic rename to {@link #TASK_RUNNING}. */
    TASK_TMP(Place.TASKS, "<local>.tmp", Kind.FILE, -1),
    /** A sharing task is reading (holds its pid): the runtime must stay up. */
    TASK_RUNNING(Place.TASKS, "<local>.running", Kind.FILE, -1),
    /** A sharing task is done reading. */
    TASK_DONE(Place.TASKS, "<local>.done", Kind.FILE, -1),
    /** The shim's void directory behind virtual directory descriptors: a mkdtemp template, removed at once. */
    VOID_DIR(Place.SHM, ".fanstore-void.XXXXXX", Kind.DIR, 0700),
    /** This rank's copies of its partitions. */
    PARTS_DIR(Place.LOCAL, "parts", Kind.DIR, -1),
    /** One copied partition, named as in the dataset's manifest. */
    PARTITION_COPY(Place.PARTS, "<partition>", Kind.FILE, -1),
    /** Uncompressed local files unpacked for direct opens: {@code files/<key>}. */
    FILES_DIR(Place.LOCAL, "files", Kind.DIR, -1),
    /**
     * Materialised files of at least the threshold in cache.ref (MaterializedCache.LOCAL_MIN_BYTES): large
     * files read faster from local disk than from tmpfs. The shim finds it beside the table's local root.
     */
    LOCAL_CACHE_DIR(Place.LOCAL, "cache", Kind.DIR, -1),
    /** The outputs this rank's processes write: {@code upper/<key>}, a real tree the shim works on natively. */
    UPPER_DIR(Place.LOCAL, "upper", Kind.DIR, 0700),
    /** The output journal the shim reads: committed files and directories (format: runtime/output/README.md). */
    OUTPUT_JOURNAL(Place.SHM, "outputs", Kind.FILE, 0600);

    /**
     * The mode of every file handed to readers ({@link #CACHE_FILE}s and the unpacked files under
     * {@link #FILES_DIR}), set before the file appears under its name: read-only, so nobody but root can write it
     * (the readers' shim also refuses writes through /proc/self/fd/N). Unlinking and replacing need no write
     * bit, so eviction is unaffected.
     */
    public static final Set<PosixFilePermission> SERVED_FILE_PERMISSIONS =
            Set.copyOf(PosixFilePermissions.fromString("r--r--r--"));

    /** The directory a name lives in. */
    public enum Place {
        /** Node-local storage (--local-dir, $TMPDIR or /tmp) or /dev/shm. */
        BASE,
        /** A job root. */
        JOB,
        /** A rank's shared-memory directory (FANSTORE_SHM_DIR for the shim). */
        SHM,
        /** A rank's node-local directory. */
        LOCAL,
        /** {@link #CACHE_DIR} or {@link #LOCAL_CACHE_DIR}. */
        CACHE,
        /** {@link #TASKS_DIR}. */
        TASKS,
        /** {@link #PARTS_DIR}. */
        PARTS
    }

    public enum Kind { FILE, DIR }

    private final Place place;
    private final String pattern;
    private final Kind kind;
    private final int mode;

    RankDirectory(Place place, String pattern, Kind kind, int mode) {
        this.place = place;
        this.pattern = pattern;
        this.kind = kind;
        this.mode = mode;
    }

    public Place place() {
        return place;
    }

    /** The name, with {@code <...>} placeholders where {@link #in} fills values in. */
    public String pattern() {
        return pattern;
    }

    public Kind kind() {
        return kind;
    }

    /** The permission bits the creator sets explicitly, or -1 when the process umask decides. */
    public int mode() {
        return mode;
    }

    /** {@link #mode()} as permissions for {@code Files.create*}; only for names with an explicit mode. */
    public Set<PosixFilePermission> permissions() {
        if (mode < 0) {
            throw new IllegalStateException(this + " has no fixed mode");
        }
        StringBuilder s = new StringBuilder(9);
        for (int bit = 8; bit >= 0; bit--) {
            s.append((mode & (1 << bit)) == 0 ? '-' : "rwx".charAt(2 - bit % 3));
        }
        return PosixFilePermissions.fromString(s.toString());
    }

    /** The name with its placeholders filled, in order, by {@code values}. */
    public String fileName(Object... values) {
        StringBuilder out = new StringBuilder(pattern.length() + 16);
        int used = 0;
        int from = 0;
        for (int open = pattern.indexOf('<'); open >= 0; open = pattern.indexOf('<', from)) {
            int close = pattern.indexOf('>', open);
            if (used == values.length) {
                break;
            }
            out.append(pattern, from, open).append(values[used++]);
            from = close + 1;
        }
        if (used != values.length || pattern.indexOf('<', from) >= 0) {
            throw new IllegalArgumentException(this + " (" + pattern + ") takes " + placeholders() + " values, got "
                    + values.length);
        }
        return out.append(pattern, from, pattern.length()).toString();
    }

    /** {@code parent/name(values)}; parent is the directory of this name's {@link #place()}. */
    public Path in(Path parent, Object... values) {
        return parent.resolve(fileName(values));
    }

    private int placeholders() {
        return (int) pattern.chars().filter(c -> c == '<').count();
    }
}
