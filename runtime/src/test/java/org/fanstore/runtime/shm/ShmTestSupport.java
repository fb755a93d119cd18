package org.fanstore.runtime.shm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Paths, processes and temp directories for the shared-memory tests. */
final class ShmTestSupport {
    private ShmTestSupport() {
    }

    static Path repoRoot() {
        final String property = System.getProperty("fanstore.repo");
        if (property != null && Files.isDirectory(Path.of(property, "interpose-native"))) {
            return Path.of(property);
        }
        Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("interpose-native"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("repository root not found from " + System.getProperty("user.dir"));
        }
        return dir;
    }

    /** build/wire_test_client, built by `make -C interpose-native all` earlier in the reactor. */
    static Path testClient() {
        final String override = System.getProperty("fanstore.wire.client");  // e.g. a variant build to compare
        final Path client = override != null ? Path.of(override)
            : repoRoot().resolve("interpose-native/build/wire_test_client");
        if (!Files.isExecutable(client)) {
            throw new IllegalStateException(client + " missing: run make -C interpose-native all");
        }
        return client;
    }

    /** A private (0700) directory under /dev/shm, like the job directory the runtime uses. */
    static Path shmTempDir() throws IOException {
        return Files.createTempDirectory(Path.of("/dev/shm"), "fanstore-test-",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    }

    static void deleteTree(final Path dir) throws IOException {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (final Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    static Process startClient(final String... args) throws IOException {
        final List<String> command = new ArrayList<>();
        command.add(testClient().toString());
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    /** Result of a finished process. */
    record Finished(int exitCode, String output) {
        /** The integer after "name=" in the output. */
        long field(final String name) {
            for (final String token : output.split("\\s+")) {
                if (token.startsWith(name + "=")) {
                    return Long.parseLong(token.substring(name.length() + 1));
                }
            }
            throw new IllegalStateException(name + " not in output: " + output);
        }
    }

    /** Waits (bounded) for the process; kills it if it overruns. */
    static Finished finish(final Process process, final long timeoutSeconds) throws Exception {
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            throw new AssertionError("process overran " + timeoutSeconds + " s: "
                + new String(process.getInputStream().readNBytes(4096), StandardCharsets.UTF_8));
        }
        final Finished finished = new Finished(process.exitValue(),
            new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        System.out.print("[client exit " + finished.exitCode() + "] " + finished.output());
        return finished;
    }

    static Finished run(final long timeoutSeconds, final String... args) throws Exception {
        return finish(startClient(args), timeoutSeconds);
    }
}
