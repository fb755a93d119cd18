package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import org.fanstore.launcher.badinput.PartitionSurgery;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 10 item 14: what the real `fanstore` script says when the user gets something wrong. One line on stderr,
 * no stack trace, no Java class name, the documented exit status, and what to do.
 */
class MessagesTest {
    @TempDir
    static Path work;

    private static FanstoreProcess.Result fanstore(String... args) throws Exception {
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of(), 60, args);
        assertFalse(r.stderr().contains("\tat ") || r.stderr().matches("(?s).*\\b[a-z]+\\.[a-z.]+\\.[A-Z]\\w+.*"),
                "stack trace or class name: " + r.stderr());
        assertFalse(r.stderr().contains("Exception"), r.stderr());
        return r;
    }

    private static void says(FanstoreProcess.Result r, int status, String... fragments) {
        assertEquals(status, r.status(), r.stderr());
        assertEquals(1, r.stderr().lines().count(), r.stderr());
        for (String f : fragments) {
            assertTrue(r.stderr().contains(f), "'" + f + "' not in: " + r.stderr());
        }
    }

    @Test
    void typosGetSuggestions() throws Exception {
        says(fanstore("prepp"), 2, "unknown command 'prepp'", "did you mean 'prep'");
        says(fanstore("prep", "--imput", "x", "--output", "y"), 2, "unknown option '--imput'",
                "did you mean '--input'");
    }

    @Test
    void runWithoutDoubleDashSaysItIsNeeded() throws Exception {
        Path data = PartitionSurgery.golden().writeTo(work.resolve("a.fs"));
        says(fanstore("run", "--data", data.toString(), "python3", "-c", "x"), 2, "put '--' before the command");
    }

    @Test
    void aMissingCommandIs127LikeAShell() throws Exception {
        Path data = PartitionSurgery.golden().writeTo(work.resolve("b.fs"));
        says(fanstore("run", "--data", data.toString(), "--", "no-such-command-xyz"), 127,
                "command not found: no-such-command-xyz");
    }

    @Test
    void aZeroLoadTimeoutIsAUsageError() throws Exception {
        Path data = PartitionSurgery.golden().writeTo(work.resolve("c.fs"));
        says(fanstore("run", "--load-timeout", "0", "--data", data.toString(), "--", "true"), 2,
                "--load-timeout must be at least 1");
    }

    @Test
    void ioFailuresNameThePathNotTheException() throws Exception {
        Path data = PartitionSurgery.golden().writeTo(work.resolve("d.fs"));
        java.nio.file.Files.delete(data.resolve(PartitionSurgery.PARTITION));
        says(fanstore("cat", data.toString(), "data/hello.txt"), 1, "no such file or directory",
                PartitionSurgery.PARTITION);
    }

    @Test
    void runHelpDoesNotBreakSentencesAcrossForcedLines() throws Exception {
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of(), 60, "run", "--help");
        assertEquals(0, r.status());
        assertFalse(r.stdout().contains("WARN") || r.stderr().contains("WARN"), r.stdout() + r.stderr());
        // Every description line is either an option line or a continuation that picocli wrapped itself.
        assertTrue(r.stdout().contains("--local-capacity=SIZE  most bytes of partitions a node keeps"),
                r.stdout());
        for (String line : r.stdout().split("\n")) {
            assertTrue(line.length() <= 80, "longer than the terminal: " + line);
        }
    }
}
