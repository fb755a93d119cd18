package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35, part B, item 3 (docs/reliability.md, "Strangers and overload"): more runtimes and readers than cores,
 * plus processes that only burn CPU, and not one reader may see an error from a runtime that is alive. On the old
 * shim, a runtime whose dispatcher was starved for 3 s made its readers' opens fail with EIO.
 */
class OverloadTest {
    @TempDir
    static Path work;

    @Test
    void fourRanksOfFourReadersAndCpuHogsOnTwoCoresGetEveryByteAndNoError() throws Exception {
        SampleDataset data = SampleDataset.make(work, "ds", 24, 3);
        int cores = Runtime.getRuntime().availableProcessors();
        int ranks = Math.max(4, 2 * cores);
        String job = "toverload" + System.nanoTime();
        String read = "(" + data.readEverything() + ")";
        // per rank: 2 CPU hogs (each ends by itself after 60 s at the latest), 4 readers started at once
        String command = "h=''; for k in 1 2; do timeout 60 sh -c 'while :; do :; done' & h=\"$h $!\"; done;"
                + " r=''; for k in 1 2 3 4; do " + read + " & r=\"$r $!\"; done; wait $r; kill $h 2>/dev/null; exit 0";
        FaultsTest.Job j = FaultsTest.Job.start(data.data(), work, Map.of("FANSTORE_JOB_ID", job),
                List.of("--ranks", Integer.toString(ranks)), command);
        try {
            assertTrue(j.launcher.waitFor(180, TimeUnit.SECONDS), () -> "job still running:\n" + j.stderr());
            assertEquals(0, j.launcher.exitValue(), j.stderr());
            assertFalse(j.stdout().contains("Input/output error") || j.stderr().contains("Input/output error"),
                    j.stderr());
            assertEquals(ranks * 4, data.tasksThatReadEverything(j.stdout()), () -> "readers with every byte"
                    + " right, of " + ranks * 4 + ":\n" + j.stderr());
            assertTrue(FaultsTest.gone(job, work), "directories left behind");
            System.out.println("overload: " + ranks + " ranks x 4 readers + " + 2 * ranks + " CPU hogs on " + cores
                    + " cores: every read right, 0 errors");
        } finally {
            j.kill();
        }
    }
}
