package org.fanstore.launcher.run;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The user's unmodified command, run with the shim preloaded and the job's environment. It inherits the
 * launcher's terminal. Stopping it takes its whole process tree down (DataLoader workers included).
 */
final class UserCommand {
    private final int rank;
    private final Process process;

    private UserCommand(int rank, Process process) {
        this.rank = rank;
        this.process = process;
    }

    static UserCommand start(int rank, List<String> command, Map<String, String> env) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
        pb.environment().putAll(env);
        try {
            return new UserCommand(rank, pb.start());
        } catch (IOException e) {
            throw new IOException("cannot start '" + command.get(0) + "' on rank " + rank + ": " + e.getMessage(), e);
        }
    }

    int rank() {
        return rank;
    }

    Process process() {
        return process;
    }

    void kill() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
