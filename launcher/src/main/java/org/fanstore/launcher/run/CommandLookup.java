package org.fanstore.launcher.run;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Finds the user's command before any runtime starts, the way a shell would, so a typo costs no load and gets a
 * shell's answer: 127 "command not found", 126 when it exists but cannot be executed.
 */
final class CommandLookup {
    static final int EXIT_NOT_FOUND = 127;
    static final int EXIT_NOT_EXECUTABLE = 126;

    /** A problem with the command and the exit status for it. */
    record Problem(int status, String message) {}

    private CommandLookup() {
    }

    /** Null when name can be executed; PATH as the command will see it. */
    static Problem check(String name, String path) {
        if (name.contains("/")) {
            Path p = Path.of(name);
            if (!Files.exists(p)) {
                return new Problem(EXIT_NOT_FOUND, "command not found: " + name + " (no such file)");
            }
            return Files.isDirectory(p) || !Files.isExecutable(p)
                    ? new Problem(EXIT_NOT_EXECUTABLE, "cannot execute " + name + ": not an executable file") : null;
        }
        for (String dir : (path == null ? "" : path).split(File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, name);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return null;
            }
        }
        return new Problem(EXIT_NOT_FOUND, "command not found: " + name);
    }
}
