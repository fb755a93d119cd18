package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.fanstore.launcher.badinput.PartitionSurgery;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 10 item 13, the parts that need a runtime: an open's answer does not depend on which rank asks (one rank
 * opens a local file directly, the other asks its runtime), and --mount refuses to hide a real directory.
 */
class PosixAnswersTest {
    @TempDir
    static Path work;

    private static final String PROBE = String.join("\n",
            "import os, errno, sys",
            "out = []",
            "for name in ('data/hello.txt', 'data/pattern.txt', 'data/nested/deep/leaf.txt'):",
            "    p = '/fanstore/golden/' + name",
            "    for label, flags in (('creat', os.O_RDONLY | os.O_CREAT), ('append', os.O_RDONLY | os.O_APPEND),",
            "                         ('excl', os.O_RDONLY | os.O_CREAT | os.O_EXCL),",
            "                         ('trunc', os.O_RDONLY | os.O_TRUNC),",
            "                         ('wronly', os.O_WRONLY)):",
            "        try:",
            "            fd = os.open(p, flags, 0o644)",
            "            r = 'ok %d' % len(os.read(fd, 1 << 20))",
            "            os.close(fd)",
            "        except OSError as e:",
            "            r = errno.errorcode[e.errno]",
            "        out.append('%s %s %s' % (name, label, r))",
            "open('answers-%s.txt' % os.environ['FANSTORE_RANK'], 'w').write('\\n'.join(out) + '\\n')");

    @Test
    void everyRankGivesTheSameAnswerToTheSameOpen() throws Exception {
        Path data = PartitionSurgery.golden().writeTo(work.resolve("golden.fs"));
        Files.writeString(work.resolve("probe.py"), PROBE);
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", "tposix" + System.nanoTime()),
                120, "run", "--ranks", "2", "--unpack", "eager", "--data", data.toString(), "--local-dir",
                work.toString(), "--", "python3", work.resolve("probe.py").toString());
        assertEquals(0, r.status(), r.stderr());
        List<String> rank0 = Files.readAllLines(work.resolve("answers-0.txt"));
        assertEquals(rank0, Files.readAllLines(work.resolve("answers-1.txt")));
        assertTrue(rank0.contains("data/hello.txt creat ok 16"), rank0.toString());
        assertTrue(rank0.contains("data/pattern.txt append ok 3000"), rank0.toString());
        assertTrue(rank0.contains("data/hello.txt excl EEXIST"), rank0.toString());
        assertTrue(rank0.contains("data/hello.txt trunc EROFS"), rank0.toString());
    }

    @Test
    void aMountOverARealDirectoryIsRefused() throws Exception {
        Path data = PartitionSurgery.golden().writeTo(work.resolve("golden2.fs"));
        Path full = Files.createDirectories(work.resolve("full"));
        Files.writeString(full.resolve("keep.txt"), "mine");
        for (String mount : new String[] {"/tmp", "/usr", full.toString()}) {
            FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of(), 60, "run", "--mount", mount, "--data",
                    data.toString(), "--", "true");
            assertEquals(2, r.status(), r.stderr());
            assertTrue(r.stderr().startsWith("fanstore run: --mount " + mount) && r.stderr().contains("/fanstore"),
                    r.stderr());
            assertEquals(1, r.stderr().lines().count(), r.stderr());
        }
        assertEquals("mine", Files.readString(full.resolve("keep.txt")));
    }
}
