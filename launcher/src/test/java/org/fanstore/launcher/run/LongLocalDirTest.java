package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A --local-dir long enough that the partition copy's path does not fit a slices.map slot (252 bytes): no file can
 * be a slice, so every plain open must fall back to the file copied out of the partition (files/), with the right
 * bytes. Every such open once got EIO, since the runtime answered the shim's slice request with an error.
 */
class LongLocalDirTest {
    @TempDir
    Path work;

    @Test
    void filesReadRightThroughCopiesWhenThePartitionPathIsTooLongForSlices() throws Exception {
        Path src = work.resolve("src/ds");
        Files.createDirectories(src);
        StringBuilder expected = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            String text = ("file " + i + " ").repeat(1000 + i);
            Files.writeString(src.resolve("f" + i), text);
            expected.append(text);
        }
        Path data = work.resolve("ds.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                data.toString(), "--partitions", "1"));
        // one 220-byte component: with the job's own directories below it, the copy's path is well over 252 bytes
        Path local = Files.createDirectories(work.resolve("l".repeat(220)));
        String job = "cat /fanstore/ds/f0 /fanstore/ds/f1 /fanstore/ds/f2 /fanstore/ds/f3 /fanstore/ds/f4"
                + " /fanstore/ds/f5 > got.txt && find " + local + "/fanstore-*/rank-0/files -type f > copied.txt";
        FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "run", "--ranks", "1",
                "--data", data.toString(), "--local-dir", local.toString(), "--", "sh", "-c", job));
        assertEquals(expected.toString(), Files.readString(work.resolve("got.txt")), r.stderr());
        List<String> copied = Files.readAllLines(work.resolve("copied.txt"));
        assertEquals(6, copied.size(), "each file read through its copy: " + copied + "\n" + r.stderr());
        assertTrue(r.stderr().contains("longer than 252 bytes"), "the slower reads are explained\n" + r.stderr());
    }
}
