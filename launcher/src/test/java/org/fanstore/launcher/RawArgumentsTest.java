package org.fanstore.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.fanstore.launcher.run.FanstoreProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file whose name is not UTF-8 (byte 0xFF) is prepped, then named on the command line of {@code fanstore cat}
 * exactly as a shell passes it (raw bytes, through bash's printf), in a UTF-8 and in the C locale: cat finds it.
 */
class RawArgumentsTest {
    @TempDir
    Path dir;

    @Test
    void catTakesANonUtf8NameFromTheCommandLine() throws Exception {
        String shell = "set -e; mkdir -p src/d; printf 'raw bytes\\n' > \"src/d/$(printf 'n\\377me.txt')\";"
                + " \"$FS\" prep --input src --output ds.fs --name ds > /dev/null;"
                + " LC_ALL=C.UTF-8 \"$FS\" cat ds.fs \"d/$(printf 'n\\377me.txt')\";"
                + " LC_ALL=C \"$FS\" cat ds.fs \"d/$(printf 'n\\377me.txt')\"";
        ProcessBuilder pb = new ProcessBuilder("bash", "-c", shell).directory(dir.toFile())
                .redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().put("FS", FanstoreProcess.repo().resolve("fanstore").toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes());
        p.waitFor(120, TimeUnit.SECONDS);
        assertEquals(0, p.exitValue(), out);
        assertEquals("raw bytes\nraw bytes\n", out);
        assertEquals(1, Files.list(dir.resolve("src/d")).count());
    }
}
