package org.fanstore.launcher;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs the real {@code ./fanstore} script (packaged jar + target/lib) from another working directory. */
class FanstoreScriptTest {
    @TempDir
    Path tmp;

    private static Path repo() {
        final String property = System.getProperty("fanstore.repo");
        if (property != null && Files.isExecutable(Path.of(property, "fanstore"))) {
            return Path.of(property);
        }
        for (Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isExecutable(dir.resolve("fanstore"))) {
                return dir;
            }
        }
        throw new AssertionError("no fanstore script above " + System.getProperty("user.dir"));
    }

    private record Result(int code, byte[] out, String err) {
    }

    private Result run(final String... args) throws IOException, InterruptedException {
        final List<String> command = new ArrayList<>();
        command.add(repo().resolve("fanstore").toString());
        command.addAll(List.of(args));
        final Path errFile = tmp.resolve("stderr");
        final Process p = new ProcessBuilder(command).directory(tmp.toFile())
            .redirectError(errFile.toFile()).start();
        final byte[] out = p.getInputStream().readAllBytes();
        final int code = p.waitFor();
        return new Result(code, out, Files.readString(errFile));
    }

    @Test
    void prepVerifyAndCatThroughTheScriptWithRelativePaths() throws Exception {
        final Path src = Files.createDirectories(tmp.resolve("data/sub"));
        final byte[] bytes = new byte[256 * 3];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte)i;
        }
        Files.write(src.resolve("all-bytes.bin"), bytes);

        final Result prep = run("prep", "--input", "data", "--output", "data.fs", "--compress", "lz4hc");
        assertEquals(0, prep.code(), prep.err());
        assertTrue(Files.isRegularFile(tmp.resolve("data.fs/manifest.txt")));
        assertTrue(Files.readString(tmp.resolve("data.fs/manifest.txt")).contains("name data\n"));

        assertEquals(0, run("verify", "data.fs").code());
        assertArrayEquals(bytes, run("cat", "data.fs", "sub/all-bytes.bin").out());

        final Result again = run("prep", "--input", "data", "--output", "data.fs");
        assertEquals(2, again.code());
        assertEquals(1, again.err().lines().count(), again.err());
        assertTrue(again.err().contains("already exists"), again.err());

        final Result version = run("--version");
        assertTrue(new String(version.out(), StandardCharsets.UTF_8).contains("fanstore"));
    }
}
