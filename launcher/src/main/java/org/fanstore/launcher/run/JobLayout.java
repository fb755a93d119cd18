package org.fanstore.launcher.run;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The per-job directories of one node: node-local storage ({@code <local-dir>/fanstore-<uid>-<job>/rank-<r>})
 * and shared memory ({@code /dev/shm/fanstore-<uid>-<job>/rank-<r>}). Both roots are 0700 and must belong to
 * us: a directory left by another user, or a symlink planted there, is refused rather than used.
 */
public final class JobLayout {
    private final Path localRoot;
    private final Path shmRoot;

    private JobLayout(Path localRoot, Path shmRoot) {
        this.localRoot = localRoot;
        this.shmRoot = shmRoot;
    }

    /** Creates (or adopts, if ours) the job's two roots. */
    public static JobLayout create(Path localBase, Path shmBase, String jobId) throws IOException {
        int uid = currentUid();
        JobLayout layout = new JobLayout(localBase.resolve("fanstore-" + uid + "-" + jobId),
                shmBase.resolve("fanstore-" + uid + "-" + jobId));
        createPrivate(layout.localRoot, uid);
        createPrivate(layout.shmRoot, uid);
        return layout;
    }

    /** The shared-memory side only, as seen by a task that shares another task's runtime. */
    static JobLayout view(Path shmRoot) {
        return new JobLayout(null, shmRoot);
    }

    /**
     * Waits while tasks sharing this node's runtime (pid files under tasks/) are still running: the runtime
     * must outlive every reader. Ends when they end; a pid file whose process is gone is ignored.
     */
    void awaitSharingTasks() throws IOException, InterruptedException {
        Path tasks = shmRoot.resolve("tasks");
        while (Files.isDirectory(tasks)) {
            boolean anyAlive;
            try (var pids = Files.list(tasks)) {
                anyAlive = pids.anyMatch(p -> ProcessHandle.of(parsePid(p)).map(ProcessHandle::isAlive).orElse(false));
            }
            if (!anyAlive) {
                return;
            }
            Thread.sleep(200);
        }
    }

    private static long parsePid(Path p) {
        try {
            return Long.parseLong(p.getFileName().toString());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    public Path localDir(int rank) {
        return localRoot.resolve("rank-" + rank);
    }

    public Path shmDir(int rank) {
        return shmRoot.resolve("rank-" + rank);
    }

    public Path localRoot() {
        return localRoot;
    }

    public Path shmRoot() {
        return shmRoot;
    }

    /** Removes both roots; safe to call more than once and from a shutdown hook. */
    public void removeAll() {
        deleteTree(shmRoot);
        if (localRoot != null) {
            deleteTree(localRoot);
        }
    }

    static int currentUid() throws IOException {
        return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    }

    private static void createPrivate(Path dir, int uid) throws IOException {
        Files.createDirectories(dir.getParent());
        try {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (java.nio.file.FileAlreadyExistsException e) {
            if (Files.isSymbolicLink(dir) || !Files.isDirectory(dir)
                    || (Integer) Files.getAttribute(dir, "unix:uid", java.nio.file.LinkOption.NOFOLLOW_LINKS) != uid) {
                throw new IOException(dir + " exists and is not a directory of ours: remove it or pick another"
                        + " job id (FANSTORE_JOB_ID)");
            }
        }
    }

    static void deleteTree(Path root) {
        if (!Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    deleteQuietly(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException exc) {
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                    deleteQuietly(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            System.err.println("fanstore: could not remove " + root + ": " + e.getMessage());
        }
    }

    private static void deleteQuietly(Path p) throws IOException {
        try {
            Files.delete(p);
        } catch (NoSuchFileException ignored) {
            // A runtime that is still shutting down may have removed it first.
        }
    }
}
