package org.fanstore.launcher.run;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import org.fanstore.runtime.output.CrashSafeCopy;

/**
 * At the start of a job with {@code --output-dir}: an earlier job's copy that was cut off (its runtime killed
 * with SIGKILL, or the launcher killed and the runtime halted mid-copy) left a hidden partial file, maybe
 * gigabytes, and its user was never told that the file did not land. Each such partial is named here, as the
 * file that was not saved, and removed.
 *
 * <p>A partial is the cut-off copy when the runtime pid in its name is no longer alive. Under a scheduler the
 * directory is shared and that pid may be a live runtime of another node, so there it must also be older than
 * any copy in progress leaves it (the drain writes continuously, then waits at most 60 s for its commit).
 */
final class InterruptedDrains {
    private static final Duration SHARED_MIN_AGE = Duration.ofMinutes(5);

    private InterruptedDrains() {
    }

    /** Reports and removes the cut-off copies under {@code outputDir}; returns how many. */
    static int clean(Path outputDir, boolean sharedAcrossNodes, PrintStream err) {
        Path root = outputDir.toAbsolutePath().normalize();
        Instant oldEnough = Instant.now().minus(SHARED_MIN_AGE);
        int[] found = {0};
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    String name = file.getFileName().toString();
                    long pid = CrashSafeCopy.partialOwner(name);
                    if (pid < 0 || !attrs.isRegularFile() || ProcessHandle.of(pid).map(ProcessHandle::isAlive)
                            .orElse(false)) {
                        return FileVisitResult.CONTINUE;
                    }
                    FileTime modified = attrs.lastModifiedTime();
                    if (sharedAcrossNodes && modified.toInstant().isAfter(oldEnough)) {
                        return FileVisitResult.CONTINUE;
                    }
                    Path target = file.resolveSibling(CrashSafeCopy.partialTarget(name));
                    try {
                        Files.delete(file);
                        found[0]++;
                        err.println("fanstore: " + target + " was not saved by an earlier job: its copy to the"
                                + " output directory was cut off (runtime pid " + pid + " is gone, e.g. killed with"
                                + " SIGKILL); removed the partial copy " + file + " (" + attrs.size() + " bytes)"
                                + (Files.exists(target) ? "; the file there is an older version" : ""));
                    } catch (IOException e) {
                        err.println("fanstore: " + target + " was not saved by an earlier job (its copy was cut"
                                + " off), and its partial copy " + file + " cannot be removed: "
                                + (e.getMessage() == null ? "I/O error" : e.getMessage()));
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) {
                    return FileVisitResult.CONTINUE;   // unreadable corners of the user's directory are theirs
                }
            });
        } catch (IOException e) {
            // walkFileTree reports per-file failures above; the root itself was checked by validate()
        }
        return found[0];
    }
}
