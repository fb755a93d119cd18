package org.fanstore.launcher.run;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs the real {@code fanstore} script as a child process, as a user would, with a hard time limit. */
public final class FanstoreProcess {
    public record Result(int status, String stdout, String stderr, long millis) {}

    public static Path repo() {
        String prop = System.getProperty("fanstore.repo");
        Path p = prop != null ? Path.of(prop) : Path.of("").toAbsolutePath();
        while (p != null && !Files.isRegularFile(p.resolve("fanstore"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException("cannot find the repository root (the directory holding ./fanstore)");
        }
        return p;
    }

    static Path nativeBuild() {
        return repo().resolve("interpose-native/build");
    }

    public static Result run(Path workDir, Map<String, String> env, long timeoutSeconds, String... args)
            throws IOException, InterruptedException {
        return runIn(new String[0], workDir, env, timeoutSeconds, args);
    }

    /** As {@link #run}, behind a prefix command (e.g. {@code ip netns exec NS}). */
    static Result runIn(String[] prefix, Path workDir, Map<String, String> env, long timeoutSeconds, String... args)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(prefix));
        cmd.add(repo().resolve("fanstore").toString());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(workDir.toFile());
        pb.environment().putAll(env);
        Path out = Files.createTempFile(workDir, "stdout", ".txt");
        Path err = Files.createTempFile(workDir, "stderr", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        long t0 = System.nanoTime();
        Process p = pb.start();
        try {
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                throw new AssertionError("fanstore " + String.join(" ", args) + " still running after "
                        + timeoutSeconds + " s; stderr so far:\n" + Files.readString(err));
            }
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8), (System.nanoTime() - t0) / 1_000_000);
    }
}
