package org.fanstore.launcher.run;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.fanstore.runtime.lifecycle.ProcessSignals;

/**
 * The user's unmodified command, run with the shim preloaded and the job's environment. It inherits the
 * launcher's terminal's descriptors but runs in a session and process group of its own ({@code setsid}, which
 * execs it in place: its pid is the group's id), so a signal can reach all of it (DataLoader workers included)
 * and a terminal's Ctrl-C reaches only the launcher, which forwards SIGTERM and grants a grace period.
 */
final class UserCommand {
    private final int rank;
    private final Process process;

    private UserCommand(int rank, Process process) {
        this.rank = rank;
        this.process = process;
    }

    static UserCommand start(int rank, List<String> command, Map<String, String> env) throws IOException {
        List<String> argv = new ArrayList<>(List.of("setsid", "--"));
        argv.addAll(command);
        ProcessBuilder pb = new ProcessBuilder(argv).inheritIO();
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

    /**
     * Sends {@code signal} to the command's process group; false once the command is wholly gone. Until
     * {@code setsid} has made that group (just after the start) there is none, and the process is still the
     * command's only one: the signal goes to it, so a signal that arrives while the command starts is not lost.
     */
    boolean signal(int signal) {
        return ProcessSignals.signalGroup(process.pid(), signal)
                || process.isAlive() && ProcessSignals.signalProcess(process.pid(), signal);
    }

    void kill() {
        signal(ProcessSignals.SIGKILL);
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
