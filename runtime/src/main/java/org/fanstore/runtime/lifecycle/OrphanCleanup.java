package org.fanstore.runtime.lifecycle;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import org.fanstore.runtime.layout.RankDirectory;

/**
 * What a runtime does when its launcher died without stopping the job: it is the last process that knows the
 * job, so it stops the user's commands (SIGTERM to each command's process group, SIGKILL after a short grace)
 * and deletes its rank's directories as the launcher would have (runtime/layout/README.md, "Deletion").
 * Deleting needs the rank's lock: if a newer launcher with the same job id already holds it, the directories
 * are that job's and are left alone.
 */
public final class OrphanCleanup {
    private OrphanCleanup() {
    }

    /** Stops the commands, then deletes {@code localDir} and {@code shmDir} of {@code rank} unless kept. */
    public static void run(int rank, Path localDir, Path shmDir, LauncherLink link) {
        stopCommands(link.commandGroups());
        if (link.keepLocal()) {
            System.err.println("fanstore rank " + rank + ": the launcher is gone; stopped the command, kept "
                    + localDir + " and " + shmDir + " (--keep-local)");
            return;
        }
        try {
            RankLock lock = RankLock.acquire(RankDirectory.RANK_LOCK.in(shmDir.getParent(), rank), LOCK_WAIT_MILLIS);
            deleteTree(shmDir);
            deleteTree(localDir);
            lock.deleteAndRelease();
            removeIfEmpty(shmDir.getParent());
            removeIfEmpty(localDir.getParent());
            System.err.println("fanstore rank " + rank + ": the launcher is gone; stopped the command and removed "
                    + localDir + " and " + shmDir);
        } catch (RankLock.HeldException newerJob) {
            System.err.println("fanstore rank " + rank + ": the launcher is gone; stopped the command; pid "
                    + newerJob.holder() + " now owns " + shmDir + ", left as is");
        } catch (IOException e) {
            System.err.println("fanstore rank " + rank + ": the launcher is gone; could not remove " + shmDir + ": "
                    + e.getMessage());
        }
    }

    /** SIGTERM to every group, a short wait for them to go, then SIGKILL to whatever is left. Bounded. */
    static void stopCommands(List<Long> groups) {
        for (long g : groups) {
            ProcessSignals.signalGroup(g, ProcessSignals.SIGTERM);
        }
        long deadline = System.nanoTime() + COMMAND_GRACE_MILLIS * 1_000_000;
        while (groups.stream().anyMatch(g -> ProcessSignals.signalGroup(g, 0)) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(COMMAND_POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        for (long g : groups) {
            ProcessSignals.signalGroup(g, ProcessSignals.SIGKILL);
        }
    }

    /** Deletes a directory tree, skipping what vanishes meanwhile; reports (once) what it could not delete. */
    public static void deleteTree(Path root) {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
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

    /** Deletes {@code dir} if nothing is left in it (another rank or node may still use it). */
    public static void removeIfEmpty(Path dir) {
        try {
            Files.deleteIfExists(dir);
        } catch (DirectoryNotEmptyException stillUsed) {
            // Another node's (or task's) directories are still there; the last one out removes the root.
        } catch (IOException e) {
            System.err.println("fanstore: could not remove " + dir + ": " + e.getMessage());
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
