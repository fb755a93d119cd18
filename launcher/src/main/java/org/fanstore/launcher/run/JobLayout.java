package org.fanstore.launcher.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.fanstore.runtime.layout.RankDirectory;
import org.fanstore.runtime.lifecycle.OrphanCleanup;
import org.fanstore.runtime.lifecycle.RankLock;

/**
 * The per-job directories of one node: node-local storage ({@code <local-dir>/fanstore-<uid>-<job>/rank-<r>})
 * and shared memory ({@code /dev/shm/fanstore-<uid>-<job>/rank-<r>}), named by {@link RankDirectory} (contract:
 * runtime/layout/README.md). Both roots are 0700 and must belong to us: a directory left by another user, or a
 * symlink planted there, is refused rather than used.
 */
public final class JobLayout {
    /** Where the shared-memory root of every job lies. */
    static final Path SHM_BASE = Path.of("/dev/shm");

    private final Path localRoot;
    private final Path shmRoot;
    private final Map<Integer, RankLock> locks = new ConcurrentHashMap<>();

    private JobLayout(Path localRoot, Path shmRoot) {
        this.localRoot = localRoot;
        this.shmRoot = shmRoot;
    }

    /** Creates (or adopts, if ours) the job's two roots. */
    public static JobLayout create(Path localBase, Path shmBase, String jobId) throws IOException {
        int uid = currentUid();
        JobLayout layout = new JobLayout(RankDirectory.JOB_ROOT.in(localBase, uid, jobId),
                RankDirectory.JOB_ROOT.in(shmBase, uid, jobId));
        createPrivate(layout.localRoot, uid);
        createPrivate(layout.shmRoot, uid);
        return layout;
    }

    /**
     * Takes the lock of each rank's directories ({@code rank-<r>.lock}) for this launcher. Nothing is created or
     * deleted in the ranks' directories before this succeeds.
     *
     * @throws RankLock.HeldException when another live launcher runs these ranks of the same job id (it holds
     *     a lock; the exception names its pid); the locks taken so far are given back
     */
    void lockRanks(int[] ranks) throws IOException {
        try {
            for (int rank : ranks) {
                locks.put(rank, RankLock.acquire(RankDirectory.RANK_LOCK.in(shmRoot, rank), 0));
            }
        } catch (IOException e) {
            locks.values().forEach(RankLock::deleteAndRelease);
            locks.clear();
            removeIfEmpty(shmRoot);
            removeIfEmpty(localRoot);
            throw e;
        }
    }

    /** The shared-memory side only, as seen by a task that shares another task's runtime (and by tests). */
    static JobLayout sharedMemoryView(String jobId) throws IOException {
        return new JobLayout(null, RankDirectory.JOB_ROOT.in(SHM_BASE, currentUid(), jobId));
    }

    /** Exists once rank's runtime serves. */
    Path readyFile(int rank) {
        return RankDirectory.READY.in(shmDir(rank));
    }

    /**
     * Registers a task sharing rank's runtime: its pid is written whole under a temporary name, then renamed to
     * {@code <local id>.running}, so the owner never reads a half-written pid and takes the task for dead.
     * Returns the file to hand to {@link #sharingTaskDone} afterwards.
     */
    Path registerSharingTask(int rank, int localId) throws IOException {
        Path tasks = Files.createDirectories(tasksDir(rank));
        Path tmp = RankDirectory.TASK_TMP.in(tasks, localId);
        Files.writeString(tmp, Long.toString(ProcessHandle.current().pid()));
        return Files.move(tmp, RankDirectory.TASK_RUNNING.in(tasks, localId), StandardCopyOption.ATOMIC_MOVE);
    }

    /** The registered task is done reading: {@code .running} becomes {@code .done}. */
    void sharingTaskDone(Path running, int localId) throws IOException {
        Files.move(running, RankDirectory.TASK_DONE.in(running.getParent(), localId), StandardCopyOption.ATOMIC_MOVE);
    }

    /**
     * Waits until the other {@code localCount - 1} tasks sharing this node's runtime are done: each writes
     * {@code tasks/<local id>.running} in the rank's directory (its pid) before reading and renames it to
     * {@code .done} after, so the
     * runtime outlives every reader. A task whose process is gone counts as done; one that never registers is
     * given up on after {@code registerTimeoutMillis} (it probably failed before reaching fanstore).
     */
    void awaitSharingTasks(int rank, int localCount, long registerTimeoutMillis)
            throws IOException, InterruptedException {
        Path tasks = tasksDir(rank);
        long deadline = System.currentTimeMillis() + registerTimeoutMillis;
        for (int local = 1; local < localCount; local++) {
            Path running = RankDirectory.TASK_RUNNING.in(tasks, local);
            Path done = RankDirectory.TASK_DONE.in(tasks, local);
            while (!Files.exists(done)) {
                if (Files.exists(running)) {
                    long pid = parsePid(running);
                    if (pid > 0 && !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                        break;
                    }
                } else if (System.currentTimeMillis() > deadline) {
                    System.err.println("fanstore: local task " + local + " never attached to this node's runtime;"
                            + " stopping it anyway");
                    break;
                }
                Thread.sleep(100);
            }
        }
    }

    private static long parsePid(Path file) {
        try {
            return Long.parseLong(Files.readString(file).trim());
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }

    /** Where tasks sharing rank's runtime register ({@code <local id>.running}, then {@code .done}). */
    Path tasksDir(int rank) {
        return RankDirectory.TASKS_DIR.in(shmDir(rank));
    }

    public Path localDir(int rank) {
        return RankDirectory.RANK_DIR.in(localRoot, rank);
    }

    public Path shmDir(int rank) {
        return RankDirectory.RANK_DIR.in(shmRoot, rank);
    }

    public Path localRoot() {
        return localRoot;
    }

    public Path shmRoot() {
        return shmRoot;
    }

    /**
     * Removes what these ranks own (their local and shared-memory directories), then each root if nothing
     * else is left in it: another node of the job may share the local root (a shared scratch file system), or,
     * when nodes are simulated on one machine, the shared-memory root. Safe to call more than once and from a
     * shutdown hook.
     */
    public void removeRanks(int[] ranks) {
        // A rank may have unpacked a million files: unlinking them is as slow as creating them, so the
        // ranks' trees go in parallel (separate directories do not contend on one directory lock).
        java.util.stream.IntStream.of(ranks).parallel().forEach(rank -> {
            deleteTree(shmDir(rank));
            if (localRoot != null) {
                deleteTree(localDir(rank));
            }
        });
        // The lock goes last, still held: a launcher waiting for it must find the directories gone.
        for (int rank : ranks) {
            RankLock lock = locks.remove(rank);
            if (lock != null) {
                lock.deleteAndRelease();
            }
        }
        removeIfEmpty(shmRoot);
        if (localRoot != null) {
            removeIfEmpty(localRoot);
        }
    }

    private static void removeIfEmpty(Path dir) {
        if (dir != null) {
            OrphanCleanup.removeIfEmpty(dir);
        }
    }

    static int currentUid() throws IOException {
        return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    }

    private static void createPrivate(Path dir, int uid) throws IOException {
        Files.createDirectories(dir.getParent());
        try {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(RankDirectory.JOB_ROOT.permissions()));
        } catch (java.nio.file.FileAlreadyExistsException e) {
            if (Files.isSymbolicLink(dir) || !Files.isDirectory(dir)
                    || (Integer) Files.getAttribute(dir, "unix:uid", java.nio.file.LinkOption.NOFOLLOW_LINKS) != uid) {
                throw new IOException(dir + " exists and is not a directory of ours: remove it or pick another"
                        + " job id (FANSTORE_JOB_ID)");
            }
        }
    }

    static void deleteTree(Path root) {
        OrphanCleanup.deleteTree(root);
    }
}
