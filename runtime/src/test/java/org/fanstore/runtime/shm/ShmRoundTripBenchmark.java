package org.fanstore.runtime.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;

import org.fanstore.runtime.layout.RankDirectory;
import org.fanstore.runtime.shm.ShmTestSupport.Finished;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Round trip of the shim protocol (C client -> Java server -> C client) against what it is added to: a native
 * open()+close() of a tmpfs file. Runs only with -Dfanstore.bench=true; prints a Markdown table.
 */
class ShmRoundTripBenchmark {
    private static final int REQUESTS_PER_THREAD = Integer.getInteger("fanstore.bench.requests", 50_000);
    private static final long TIMEOUT_S = 600;

    @Test
    @SuppressWarnings("try")  // the server is never named in the body: it only has to serve while the body runs
    void roundTripVersusNativeOpen() throws Exception {
        Assumptions.assumeTrue(Boolean.getBoolean("fanstore.bench"), "benchmark: run with -Dfanstore.bench=true");
        final Path dir = ShmTestSupport.shmTempDir();
        final Path ctl = RankDirectory.CONTROL_FILE.in(dir);
        final Path file = Files.write(dir.resolve("sample.bin"), new byte[4096]);
        final StringBuilder table = new StringBuilder(
            "| what | threads | requests | req/s | p50 us | p99 us | max us |\n|---|---|---|---|---|---|---|\n");
        try (ShmServer server = ShmServer.create(ctl, 64, 1024, 16 * 1024,
            (request, responder) -> responder.ok(EchoHandler.answerFor(request.keyString())), true)) {
            ShmTestSupport.run(TIMEOUT_S, "check", ctl.toString(), "1", "20000", "warmup");  // JIT, page faults
            for (final int threads : new int[] {1, 4}) {
                final String n = Integer.toString(REQUESTS_PER_THREAD);
                final Finished wire = ShmTestSupport.run(TIMEOUT_S, "check", ctl.toString(),
                    Integer.toString(threads), n, "bench");
                assertEquals(0, wire.exitCode(), wire.output());
                row(table, "shim->runtime round trip", threads, wire);
                final Finished open = ShmTestSupport.run(TIMEOUT_S, "native", file.toString(),
                    Integer.toString(threads), n);
                assertEquals(0, open.exitCode(), open.output());
                row(table, "native open()+close() tmpfs", threads, open);
            }
        } finally {
            ShmTestSupport.deleteTree(dir);
        }
        System.out.println(table);
    }

    private static void row(final StringBuilder table, final String what, final int threads, final Finished f) {
        table.append(String.format("| %s | %d | %d | %d | %.1f | %.1f | %.1f |%n", what, threads, f.field("requests"),
            f.field("rps"), f.field("p50_ns") / 1e3, f.field("p99_ns") / 1e3, f.field("max_ns") / 1e3));
    }
}
