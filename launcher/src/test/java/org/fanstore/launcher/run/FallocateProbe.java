package org.fanstore.launcher.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;

/** Tests of files given their blocks up front (runtime/fileblocks) run only where the file system can do it. */
final class FallocateProbe {
    private FallocateProbe() {
    }

    /** Skips the calling test, saying why, when {@code dir}'s file system has no fallocate. */
    static void assumeIn(Path dir, String otherwise) throws IOException, InterruptedException {
        Path probe = dir.resolve("fallocate-probe");
        Assumptions.assumeTrue(new ProcessBuilder("fallocate", "-l", "8192", probe.toString()).inheritIO().start()
                .waitFor() == 0, "the file system of " + dir + " has no fallocate: " + otherwise);
        Files.delete(probe);
    }
}
