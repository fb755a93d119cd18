package org.fanstore.launcher.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.fanstore.launcher.run.FanstoreProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writes under the mount through a real {@code fanstore run --ranks 1} and unmodified programs (bash, coreutils,
 * tar, find, Python with numpy and torch): interpose-native/tests/e2e_writes.sh runs inside the job and checks
 * each behaviour. The second test gives the job a 3 MiB tmpfs as its local directory.
 */
class WritesTest {
    @TempDir
    Path dir;

    private Path dataset() throws Exception {
        Path src = Files.createDirectories(dir.resolve("src/d"));
        Files.writeString(src.getParent().resolve("a.txt"), "hello\n");
        Files.writeString(src.resolve("b.txt"), "x\n");
        Path data = dir.resolve("data.fs");
        assertEquals(0, fanstore(60, "prep", "--input", src.getParent().toString(), "--output", data.toString(),
                "--name", "ds").status, "prep");
        return data;
    }

    private record Out(int status, String text) {
    }

    private Out fanstore(long seconds, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(FanstoreProcess.repo().resolve("fanstore").toString()));
        cmd.addAll(List.of(args));
        Path log = Files.createTempFile(dir, "log", ".txt");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().put("W_LOCAL", dir.resolve("local").toString());
        Process p = pb.start();
        boolean done = p.waitFor(seconds, TimeUnit.SECONDS);
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        String text = Files.readString(log);
        assertTrue(done, "timed out:\n" + text);
        return new Out(p.exitValue(), text);
    }

    @Test
    void realProgramsWriteReadRenameAndRemoveOutputs() throws Exception {
        Path data = dataset();
        Files.createDirectories(dir.resolve("local"));
        Out out = fanstore(120, "run", "--ranks", "1", "--local-dir", dir.resolve("local").toString(), "--data",
                data.toString(), "--", "bash",
                FanstoreProcess.repo().resolve("interpose-native/tests/e2e_writes.sh").toString(), "ds");
        assertEquals(0, out.status, out.text);
        assertTrue(out.text.contains(" passed, 0 failed"), out.text);
    }

    @Test
    void aFullLocalDiskGivesTheWriterEnospcAndLosesNoCommit() throws Exception {
        Path data = dataset();
        Path tiny = Files.createDirectories(dir.resolve("tiny"));
        Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", tiny.toString())
                .redirectErrorStream(true).start();
        assumeTrue(mount.waitFor(10, TimeUnit.SECONDS) && mount.exitValue() == 0, "cannot mount a tmpfs here");
        try {
            String script = String.join("\n",
                    "import os, errno",
                    "p = '/fanstore/ds/big'",
                    "f = os.open(p, os.O_WRONLY | os.O_CREAT)",
                    "try:",
                    "    for i in range(100): os.write(f, b'x' * (1 << 20))",
                    "    print('write ok')",
                    "except OSError as e:",
                    "    print('write', errno.errorcode[e.errno])",
                    "os.close(f)",
                    "print('committed', os.path.getsize(p) > 0)",
                    "os.unlink(p)",
                    "with open('/fanstore/ds/small', 'w') as g: g.write('ok')",
                    "print('after', open('/fanstore/ds/small').read())");
            Out out = fanstore(120, "run", "--ranks", "1", "--local-dir", tiny.toString(), "--data",
                    data.toString(), "--", "/usr/bin/python3", "-c", script);
            assertEquals(0, out.status, out.text);
            assertTrue(out.text.contains("write ENOSPC"), out.text);
            assertTrue(out.text.contains("committed True"), out.text);
            assertTrue(out.text.contains("after ok"), out.text);
        } finally {
            new ProcessBuilder("umount", tiny.toString()).start().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
