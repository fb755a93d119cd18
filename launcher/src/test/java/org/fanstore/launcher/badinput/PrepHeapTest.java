package org.fanstore.launcher.badinput;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.fanstore.launcher.run.FanstoreProcess;
import org.fanstore.prep.format.DatasetVerifier;
import org.fanstore.prep.format.Manifest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 44: what {@code fanstore prep} holds per file (prep/README.md "Memory"). The real command preps a tree of
 * {@link #FILES} files in ImageNet's shape in a launcher JVM capped at {@link #HEAP_MB} MiB and the dataset must
 * verify. Calibrated on this tree: main 4e89c45 failed with an OutOfMemoryError at -Xmx96m (passed at 128m);
 * c2637ac and later pass at 64m (fail at 48m).
 */
class PrepHeapTest {
    static final int DIRS = 100;
    static final int FILES = 150_000;
    static final int HEAP_MB = 80;

    /** The tree both cases prep (150,000 files: made once). */
    @TempDir
    static Path shared;
    static Path src;

    @TempDir
    Path work;

    @BeforeAll
    static void makeTree() throws IOException {
        src = tree(shared.resolve("src"));
    }

    @Test
    void aTreeOfManyFilesPrepsInAHeapTheOldListingCouldNotHold() throws Exception {
        final Path out = work.resolve("heap.fs");
        final FanstoreProcess.Result r = FanstoreProcess.run(work,
            Map.of("FANSTORE_JAVA_OPTS", "-Xmx" + HEAP_MB + "m -XX:-UseGCOverheadLimit"), 300,
            "prep", "--input=" + src, "--output=" + out, "--partitions=8");
        assertEquals(0, r.status(), "prep in -Xmx" + HEAP_MB + "m: " + r.stderr());
        assertTrue(!r.stderr().contains("OutOfMemoryError"), r.stderr());
        final Manifest m = Manifest.read(out);
        assertEquals(FILES, m.files());
        assertEquals(DIRS + 1, m.dirs());
        assertTrue(DatasetVerifier.verify(out).ok(), "the dataset prepped in a small heap verifies");
    }

    /** A heap too small for the tree: one line saying how to give prep more, no trace, nothing left behind. */
    @Test
    void aHeapTooSmallForTheTreeIsOneLineAndLeavesNothing() throws Exception {
        final Path out = work.resolve("small.fs");
        final FanstoreProcess.Result r = FanstoreProcess.run(work,
            Map.of("FANSTORE_JAVA_OPTS", "-Xmx16m -XX:-UseGCOverheadLimit"), 300,
            "prep", "--input=" + src, "--output=" + out, "--partitions=8");
        assertEquals(1, r.status(), r.stderr());
        assertTrue(r.stderr().startsWith("fanstore prep: out of memory: the launcher's Java heap (at most "),
            r.stderr());
        assertTrue(r.stderr().contains("FANSTORE_JAVA_OPTS=-Xmx"), r.stderr());
        assertEquals(1, r.stderr().strip().lines().count(), "one line:\n" + r.stderr());
        assertTrue(!r.stderr().contains("Error") && !r.stderr().contains("\tat "), r.stderr());
        try (var left = Files.list(work)) {
            assertEquals(java.util.List.of(), left.map(p -> p.getFileName().toString())
                .filter(n -> !n.startsWith("stdout") && !n.startsWith("stderr")).sorted().toList(),
                "prep left something beside its input");
        }
    }

    /** {@code n00000000/n00000000_0.JPEG} ...: {@link #DIRS} directories of empty files (inodes, not bytes). */
    private static Path tree(final Path root) throws IOException {
        for (int d = 0; d < DIRS; d++) {
            final String dir = String.format("n%08d", d);
            final Path p = Files.createDirectories(root.resolve(dir));
            for (int i = 0; i < FILES / DIRS; i++) {
                Files.createFile(p.resolve(dir + "_" + i + ".JPEG"));
            }
        }
        return root;
    }
}
