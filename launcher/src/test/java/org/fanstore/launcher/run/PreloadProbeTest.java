package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.fanstore.launcher.badinput.PartitionSurgery;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 47: a shim the loader cannot preload ends the job with one line before anything starts; the command never
 * runs without the mount.
 */
class PreloadProbeTest {
    @TempDir
    static Path work;

    private static void refused(FanstoreProcess.Result r, Path marker, String... fragments) {
        assertEquals(2, r.status(), r.stderr());
        assertEquals(1, r.stderr().lines().count(), r.stderr());
        for (String f : fragments) {
            assertTrue(r.stderr().contains(f), "'" + f + "' not in: " + r.stderr());
        }
        assertFalse(Files.exists(marker), "the command ran without the shim");
    }

    @Test
    void aShimTheLoaderIgnoresStopsTheJobBeforeTheCommand() throws Exception {
        Path data = PartitionSurgery.golden().writeTo(work.resolve("a.fs"));
        Path notElf = Files.writeString(work.resolve("libfanstore.so"), "not a shared object\n");
        Path marker = work.resolve("ran-a");
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of("FANSTORE_SHIM", notElf.toString()), 60,
                "run", "--data", data.toString(), "--", "touch", marker.toString());
        refused(r, marker, "the shim " + notElf + " cannot be preloaded (ld.so: ", "not started",
                "glibc 2.17 or newer", "FANSTORE_SHIM");
    }

    @Test
    void aUserPreloadThatFailsDoesNotBlockTheJob() throws Exception {
        Path data = PartitionSurgery.golden().writeTo(work.resolve("b.fs"));
        Path copy = work.resolve("copy-of-libfanstore.so");
        Files.copy(FanstoreProcess.nativeBuild().resolve("libfanstore.so"), copy);
        Path marker = work.resolve("ran-b");
        // a preload the user adds that does not load is the loader's business; ours loading is what counts
        FanstoreProcess.Result ok = FanstoreProcess.run(work, Map.of("FANSTORE_SHIM", copy.toString(),
                "LD_PRELOAD", work.resolve("no-such-lib.so").toString()), 120, "run", "--data", data.toString(),
                "--", "touch", marker.toString());
        assertEquals(0, ok.status(), ok.stderr());
        assertTrue(Files.exists(marker));
    }

    @Test
    void loaderMessagesShortenToTheirReason() {
        assertEquals("ld.so: cannot open shared object file", PreloadProbe.reason("ERROR: ld.so: object '/x/lib"
                + "fanstore.so' from LD_PRELOAD cannot be preloaded (cannot open shared object file): ignored.\n", 0));
        assertEquals("ld.so: it needs GLIBC_2.34, newer than this machine's glibc", PreloadProbe.reason(
                "/bin/true: /lib64/libc.so.6: version `GLIBC_2.34' not found (required by /x/libfanstore.so)\n", 1));
        assertTrue(PreloadProbe.reason("", 0).contains("never ran"));
    }
}
