package org.fanstore.launcher.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.fanstore.launcher.run.FanstoreProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file the other ranks cannot be told of fails its writer's close (upper.h, fs_up_closing): rank 1 writes
 * out/x and out/z while rank 0 makes directories of those names, so their publishes are refused (EISDIR at the
 * owner). Python's close (close) and C's fclose (through ctypes, the global scope) must both fail with EIO, the
 * runtime must name the file and why in one line, and a file published normally must still close cleanly and be
 * read by the other rank and drained; the two refused files are named as not saved and the job ends with status 4.
 * 2 real ranks through the shim; the order is forced with files in a shared directory.
 */
class CloseReportsRefusedPublishTest {
    @TempDir
    Path dir;

    @Test
    void aRefusedPublishIsTheWritersCloseErrorAndNamedInTheLog() throws Exception {
        FanstoreProcess.Result r = ClusterWritesTest.twoRankScript(dir, "e2e_refused_publish.py");
        Path saved = dir.resolve("saved");
        String all = r.stdout() + r.stderr();
        assertTrue(r.stdout().contains("rank 0 read kept"), all);
        assertTrue(r.stdout().contains("rank 1 close EIO"), all);
        assertTrue(r.stdout().contains("rank 1 fclose -1 EIO"), all);
        for (String name : new String[] {"x", "z"}) {
            assertTrue(r.stderr().contains(": output out/" + name + " not published: a directory of that name was"
                    + " made on another rank (EISDIR); removed from this node; its writer's close fails"), all);
        }
        // nothing lost silently: both are named as not saved (the output directory has the directories there) and
        // the job ends with the exit status for outputs not saved
        assertTrue(all.contains("fanstore: 2 output file(s) were not saved to " + saved), all);
        assertEquals("kept\n", Files.readString(saved.resolve("out/kept")));
        assertEquals(4, r.status(), all);
    }
}
