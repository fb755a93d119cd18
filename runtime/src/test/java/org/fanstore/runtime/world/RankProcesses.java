package org.fanstore.runtime.world;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Child JVMs, one per rank, for the multi-process tests: small heaps and a cheap JIT (the machine is
 * shared), output to one log file per rank, and every process killed on {@link #close()}.
 */
public final class RankProcesses implements AutoCloseable {
    private final Path logs;
    private final List<Process> processes = new ArrayList<>();

    public RankProcesses(Path logs) {
        this.logs = logs;
    }

    /** The runtime ranks' JVM flags, as the root pom sets them (Surefire passes them on). */
    public static List<String> runtimeJvmFlags() {
        String flags = System.getProperty("fanstore.jvm.runtime.flags");
        if (flags == null || flags.isBlank()) {
            throw new IllegalStateException("system property fanstore.jvm.runtime.flags is not set: run through Maven");
        }
        return List.of(flags.trim().split("\\s+"));
    }

    public Process start(int rank, Class<?> main, String... args) throws IOException {
        String classPath = System.getProperty("java.class.path") + File.pathSeparator + "/usr/share/java/mpj.jar";
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m"));
        command.addAll(runtimeJvmFlags());
        command.addAll(List.of("-cp", classPath, main.getName()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log(rank).toFile());
        pb.environment().put("MPJ_HOME", "/usr/share/mpj");
        Process p = pb.start();
        processes.add(p);
        return p;
    }

    public Path log(int rank) {
        return logs.resolve("rank-" + rank + ".log");
    }

    public String output(int rank) throws IOException {
        return Files.exists(log(rank)) ? Files.readString(log(rank), StandardCharsets.UTF_8) : "";
    }

    /** Waits (bounded) until rank's output contains {@code text}. */
    public boolean awaitOutput(int rank, String text, long timeoutMillis) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (System.nanoTime() < deadline) {
            if (output(rank).contains(text)) {
                return true;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
        return false;
    }

    /** Waits for the process's exit, at most {@code timeoutMillis}; kills it if it is still running. */
    public int exitCode(Process p, long timeoutMillis) throws InterruptedException {
        if (!p.waitFor(timeoutMillis, TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
            return -1;
        }
        return p.exitValue();
    }

    public static void send(Process p, String line) throws IOException {
        OutputStream in = p.getOutputStream();
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    public String allOutput() throws IOException {
        StringBuilder b = new StringBuilder();
        for (int r = 0; r < processes.size(); r++) {
            b.append("---- rank ").append(r).append(" ----\n").append(output(r));
        }
        return b.toString();
    }

    @Override
    public void close() {
        for (Process p : processes) {
            p.destroyForcibly();
        }
        try {
            for (Process p : processes) {
                p.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();  // the processes are already killed; keep the interrupt visible
        }
    }
}
