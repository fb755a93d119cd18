package org.fanstore.launcher;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The launcher JVM's own temporary directory. lz4-java unpacks its native library into {@code java.io.tmpdir}
 * and deletes it only at a normal exit, so a prep, verify or cat killed with SIGKILL left it in /tmp for good. The
 * fanstore script gives each launcher JVM {@code <TMPDIR>/fanstore-<uid>/launcher-<pid>} (0700, in a 0700
 * directory it checked is the user's own; exec keeps the script's pid): this removes it at exit, and the next
 * launcher removes those of launchers that no longer run. A directory of a pid that another process now holds is
 * left for a later sweep.
 */
final class LauncherTmp {
    private static final String PREFIX = "launcher-";

    private LauncherTmp() {
    }

    /** Takes charge of this JVM's directory, if the script gave it one; sweeps those of dead launchers. */
    static void install() {
        final Path dir = Path.of(System.getProperty("java.io.tmpdir"));
        final Path name = dir.getFileName();
        if (name == null || !name.toString().equals(PREFIX + ProcessHandle.current().pid())
            || dir.getParent() == null) {
            return;   // not the script's (FANSTORE_JVM_FLAGS set another, or an embedded use)
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteTree(dir), "fanstore-tmp-cleanup"));
        try (DirectoryStream<Path> siblings = Files.newDirectoryStream(dir.getParent(), PREFIX + "*")) {
            for (final Path other : siblings) {
                final long pid = pidOf(other);
                if (pid > 0 && ProcessHandle.of(pid).isEmpty()) {
                    deleteTree(other);
                }
            }
        } catch (final IOException ignored) {
            // a sweep that cannot list the directory leaves it for the next launcher
        }
    }

    private static long pidOf(final Path dir) {
        try {
            return Long.parseLong(dir.getFileName().toString().substring(PREFIX.length()));
        } catch (final NumberFormatException e) {
            return -1;
        }
    }

    /** Removes dir and everything under it, best effort. */
    static void deleteTree(final Path dir) {
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (final IOException ignored) {
                    // best effort: what is left is swept by the next launcher
                }
            });
        } catch (final IOException ignored) {
            // gone already, or unreadable: nothing more to do here
        }
    }
}
