package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --output-dir} reaches every rank, whose drain reports at the end of the job; without it the job says
 * once that outputs are discarded. (Files reach the drain through the write path; the drain's own behaviour is
 * pinned down by DirectoryDrainTest in the runtime and ClusterCommitterProcessTest.)
 */
class OutputDirJobTest {
    private static final String DISCARDED = "are discarded when it ends";

    @TempDir
    Path work;

    @Test
    void everyRankDrainsToTheOutputDirAndWithoutOneTheJobSaysOnceThatOutputsAreDiscarded() throws Exception {
        Path src = work.resolve("src/ds");
        Files.createDirectories(src);
        Files.writeString(src.resolve("f.txt"), "input\n");
        Path data = work.resolve("ds.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                data.toString()));

        FanstoreProcess.Result without = RunJobTest.ok(FanstoreProcess.run(work,
                Map.of("FANSTORE_JOB_ID", "noout" + System.nanoTime()), 120, "run", "--ranks", "2", "--data",
                data.toString(), "--local-dir", work.toString(), "--", "true"));
        assertEquals(1, without.stderr().split(Pattern.quote(DISCARDED), -1).length - 1, without.stderr());

        Path out = Files.createDirectories(work.resolve("out"));
        FanstoreProcess.Result with = RunJobTest.ok(FanstoreProcess.run(work,
                Map.of("FANSTORE_JOB_ID", "out" + System.nanoTime(), "FANSTORE_VERBOSE", "1"), 120, "run",
                "--ranks", "2", "--data", data.toString(), "--local-dir", work.toString(), "--output-dir",
                out.toString(), "--", "true"));
        assertTrue(!with.stderr().contains(DISCARDED), with.stderr());
        for (int rank = 0; rank < 2; rank++) {
            assertTrue(with.stderr().contains("rank " + rank + ": drained files=0 bytes=0"), with.stderr());
        }
    }
}
