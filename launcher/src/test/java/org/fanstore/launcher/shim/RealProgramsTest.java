package org.fanstore.launcher.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.fanstore.launcher.run.FanstoreProcess;
import org.fanstore.launcher.run.Soak;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Unmodified programs (coreutils, tar, find, Python with numpy, PIL and a torch DataLoader with fork and spawn
 * workers) under libfanstore.so, compared with the same commands on the source tree: see
 * interpose-native/tests/e2e_programs.sh for the checks. "table" serves a table built from the tree with no
 * runtime (every file local and unpacked); "run" goes through `fanstore run`, where compressed files are
 * decompressed by the runtime and, with 2 ranks, half the files are fetched from rank 1. With --unpack lazy,
 * every local file's first open finds nothing on disk and is unpacked by the runtime on demand.
 */
class RealProgramsTest {

    /**
     * Slice descriptors against a hand-made slices.map whose partition copy has junk between the bodies: every
     * windowed, materialising and exec-inheriting call (interpose-native/tests/slice_checks.py) must read exactly
     * the source bytes, and plain opens must be slices.
     */
    @Test
    void slicesReadExactlyTheirWindowThroughEveryCall() throws Exception {
        String out = runScript("interpose-native/tests/e2e_slices.sh", Map.of());
        assertTrue(out.contains("e2e_slices: all passed"), out);
    }

    @ParameterizedTest(name = "{0}, {1} rank(s), compress {2}, unpack {3}")
    @CsvSource({"table, 1, none, eager", "run, 1, none, eager", "run, 1, lz4, background",
            "run, 2, none, background", "run, 2, lz4, background", "run, 2, none, lazy"})
    void programsSeeTheSameTreeThroughTheShim(String mode, int ranks, String compress, String unpack)
            throws Exception {
        // the torch checks (~24 s a mode) in the table mode and the 2-rank LZ4 one; in every mode under the soak
        boolean torch = Soak.ON || mode.equals("table") || ranks == 2 && compress.equals("lz4");
        String out = runScript("interpose-native/tests/e2e_programs.sh", Map.of("FANSTORE_E2E_MODE", mode,
                "FANSTORE_E2E_RANKS", Integer.toString(ranks), "FANSTORE_E2E_COMPRESS", compress,
                "FANSTORE_E2E_UNPACK", unpack, "FANSTORE_E2E_TORCH", torch ? "1" : "0"));
        assertTrue(torch == out.contains("PASS torch DataLoader workers"), out);
        assertTrue(out.contains(" passed, 0 failed"), out);
        assertTrue(!out.contains("\nFAIL"), out);
    }

    /**
     * Runs a test script (bash, or python3 for a .py) with env added; returns its output after checking it finished
     * in time and exited 0.
     */
    static String runScript(String script, Map<String, String> env) throws Exception {
        Path repo = FanstoreProcess.repo();
        Path log = Files.createTempFile("e2e-programs", ".log");
        try {
            ProcessBuilder pb = new ProcessBuilder(script.endsWith(".py") ? "/usr/bin/python3" : "bash",
                    repo.resolve(script).toString())
                    .redirectErrorStream(true).redirectOutput(log.toFile());
            pb.environment().putAll(env);
            Process p = pb.start();
            boolean done = p.waitFor(300, TimeUnit.SECONDS);
            if (!done) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
            String out = Files.readString(log);
            assertTrue(done, "timed out:\n" + out);
            assertEquals(0, p.exitValue(), out);
            return out;
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
