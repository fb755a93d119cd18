package org.fanstore.prep.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * The golden files under {@code tests/vectors/}, shared with the C tests, and the one rule every writer test
 * follows: what the writer produces now must equal the committed bytes, unless the run is asked to rewrite them
 * ({@code -Dfanstore.regenerateVectors=true}) after a deliberate format change.
 */
public final class TestVectors {
    private TestVectors() {
    }

    /** {@code tests/vectors/<name>} of this repository (Surefire's fanstore.repo, else above the working dir). */
    public static Path dir(String name) {
        String repo = System.getProperty("fanstore.repo");
        Path dir = repo != null ? Path.of(repo) : Path.of("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("tests/vectors"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("no tests/vectors above " + Path.of("").toAbsolutePath());
        }
        return dir.resolve("tests/vectors").resolve(name);
    }

    /** Files {@code names} the writer just made in {@code fresh} equal those committed in {@code committedDir}. */
    public static void assertReproduced(Path committedDir, Path fresh, List<String> names, String drift)
            throws IOException {
        if (Boolean.getBoolean("fanstore.regenerateVectors")) {
            for (String name : names) {
                Files.copy(fresh.resolve(name), committedDir.resolve(name), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        for (String name : names) {
            Path committed = committedDir.resolve(name);
            assertTrue(Files.exists(committed),
                    committed + " missing: regenerate with -Dfanstore.regenerateVectors=true");
            assertArrayEquals(Files.readAllBytes(committed), Files.readAllBytes(fresh.resolve(name)),
                    name + " differs from what the writer now produces: " + drift + "?");
        }
    }
}
