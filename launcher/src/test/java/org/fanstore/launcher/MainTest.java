package org.fanstore.launcher;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MainTest {
    @TempDir
    Path tmp;

    /** What one command printed and returned. */
    private record Run(int code, byte[] out, String err) {
        String outText() {
            return new String(out, StandardCharsets.UTF_8);
        }
    }

    private static Run fanstore(final String... args) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int code = Main.execute(args, out, new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.toByteArray(), err.toString(StandardCharsets.UTF_8));
    }

    private Path smallTree() throws IOException {
        final Path src = Files.createDirectories(tmp.resolve("src/images"));
        Files.createDirectories(tmp.resolve("src/empty"));
        final byte[] binary = new byte[70_000];
        new Random(5).nextBytes(binary);
        Files.write(src.resolve("0.bin"), binary);
        Files.writeString(src.resolve("labels.csv"), "1,cat\n2,dog\n".repeat(1000));
        return tmp.resolve("src");
    }

    @Test
    void badInputIsOneLineAndExitCode2() {
        final Run run = fanstore("prep", "--input", tmp.resolve("nope").toString(), "--output",
            tmp.resolve("out.fs").toString());
        assertEquals(2, run.code());
        assertEquals(1, run.err().lines().count(), run.err());
        assertTrue(run.err().contains(tmp.resolve("nope") + " does not exist"), run.err());
    }

    @Test
    void unwritableOutputIsOneLineAndExitCode2() throws IOException {
        final Path src = smallTree();
        final Path notADir = Files.writeString(tmp.resolve("plain-file"), "x");
        final Run run = fanstore("prep", "--input", src.toString(), "--output", notADir.resolve("out.fs").toString());
        assertEquals(2, run.code());
        assertEquals(1, run.err().lines().count(), run.err());
        assertTrue(run.err().contains(notADir.toString()), run.err());

        final Path readOnly = Files.createDirectories(tmp.resolve("read-only"));
        assertTrue(readOnly.toFile().setWritable(false, false));
        final Run denied = fanstore("prep", "--input", src.toString(), "--output",
            readOnly.resolve("out.fs").toString());
        if (!"root".equals(System.getProperty("user.name"))) {
            assertEquals(2, denied.code(), denied.err());
            assertEquals(1, denied.err().lines().count(), denied.err());
            assertTrue(denied.err().contains(readOnly.toString()), denied.err());
        }
        assertTrue(readOnly.toFile().setWritable(true, false));
    }

    @Test
    void prepThenInspectWithVerifyLsStatAndCat() throws IOException {
        final Path src = smallTree();
        final String out = tmp.resolve("out.fs").toString();
        final Run prep = fanstore("prep", "--input", src.toString(), "--output", out, "--partitions", "2",
            "--compress", "lz4");
        assertEquals(0, prep.code(), prep.err());
        assertTrue(prep.outText().startsWith("fanstore prep: 2 files"), prep.outText());

        final Run verify = fanstore("verify", out);
        assertEquals(0, verify.code(), verify.err());
        assertTrue(verify.outText().contains("OK"));

        assertEquals("empty\nimages\nimages/0.bin\nimages/labels.csv\n", fanstore("ls", "-R", out).outText());
        final Run longLs = fanstore("ls", "-l", out, "images");
        assertTrue(longLs.outText().contains("-rw-") && longLs.outText().contains("70000"), longLs.outText());
        final Run rootLs = fanstore("ls", "-l", out);
        assertTrue(rootLs.outText().lines().anyMatch(l -> l.startsWith("drwx") && l.endsWith("images")),
            rootLs.outText());

        final Run stat = fanstore("stat", out, "/images/labels.csv");
        assertTrue(stat.outText().contains("lz4-chunked") && stat.outText().contains("size: 12000"),
            stat.outText());
        final Run escaped = fanstore("stat", out, "images%2Flabels%2ecsv");
        assertEquals(stat.outText(), escaped.outText(), "a PATH may spell bytes as %XX");

        assertArrayEquals(Files.readAllBytes(src.resolve("images/0.bin")), fanstore("cat", out, "images/0.bin").out());

        final Run missing = fanstore("cat", out, "images/none");
        assertEquals(2, missing.code());
        assertTrue(missing.err().contains("images/none"), missing.err());
    }

    @Test
    void verifyExitsNonZeroAndNamesTheDamagedPartitionAndFile() throws IOException {
        final Path src = smallTree();
        final Path out = tmp.resolve("out.fs");
        assertEquals(0, fanstore("prep", "--input", src.toString(), "--output", out.toString()).code());
        final Path partition = out.resolve("part-00000.fsp");
        final byte[] bytes = Files.readAllBytes(partition);
        bytes[4096 + 100] ^= 0x01; // inside images/0.bin, the first body of the data area
        Files.write(partition, bytes);

        final Run verify = fanstore("verify", out.toString());
        assertEquals(1, verify.code());
        assertTrue(verify.outText().contains("part-00000.fsp: images/0.bin: CRC32C"), verify.outText());
        final Run cat = fanstore("cat", out.toString(), "images/0.bin");
        assertEquals(1, cat.code());
        assertTrue(cat.err().contains("part-00000.fsp") && cat.err().contains("images/0.bin"), cat.err());
    }

    @Test
    void unknownOptionIsOneLineAndExitCode2() {
        final Run run = fanstore("prep", "--bogus");
        assertEquals(2, run.code());
        assertEquals(1, run.err().lines().count(), run.err());
    }

    /**
     * A thread's uncaught death: one line, the out-of-memory one when the heap ran out (the error or a cause), and
     * nothing from a thread that dies after that line is said (CI once saw prep's walker add "internal error in
     * fanstore-prep-walker: null" after the heap ran out in a 16 MiB launcher).
     */
    @Test
    void aThreadDyingAfterTheHeapRanOutAddsNoSecondLine() {
        final AtomicBoolean said = new AtomicBoolean();
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        final Thread walker = new Thread(() -> { }, "fanstore-prep-walker");

        Main.uncaught("fanstore prep", walker, new IllegalStateException(), err, said);
        final String before = bytes.toString(StandardCharsets.UTF_8);
        assertEquals("fanstore: internal error in fanstore-prep-walker: no details (please report it;"
            + " FANSTORE_DEBUG=1 shows details)", before.strip());
        bytes.reset();

        Main.uncaught("fanstore prep", walker, new RuntimeException("wrapped", new OutOfMemoryError("heap")), err,
            said);
        final String oom = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(oom.startsWith("fanstore prep: out of memory: the launcher's Java heap (at most "), oom);
        assertEquals(1, oom.lines().count(), oom);
        assertTrue(said.get());
        bytes.reset();

        Main.uncaught("fanstore prep", walker, new IllegalMonitorStateException(), err, said);
        Main.uncaught("fanstore prep", walker, new OutOfMemoryError(), err, said);
        assertEquals("", bytes.toString(StandardCharsets.UTF_8), "after the out-of-memory line, silence");
    }
}
