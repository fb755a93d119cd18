package org.fanstore.runtime.fill;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real file on the test's file system (ext4 or tmpfs here): punched ranges give their blocks back and read as
 * zeros, the size and every other byte stay.
 */
class PunchHolesTest {
    @TempDir
    Path dir;

    @Test
    void punchedRangesAreFreedAndTheRestIsUntouched() throws Exception {
        Path f = dir.resolve(".pull-part-00003.fsp");
        byte[] data = new byte[1 << 20];
        new Random(5).nextBytes(data);
        Files.write(f, data);
        long before = allocatedBytes(f);
        assertTrue(before >= data.length, "written out: " + before);

        long punched = PunchHoles.punch(f, List.of(new long[] {4096, 4096}, new long[] {65_536, (1 << 20) - 131_072}));
        assertEquals(4096 + (1 << 20) - 131_072, punched);

        assertEquals(data.length, Files.size(f), "the size stays");
        byte[] after = Files.readAllBytes(f);
        assertArrayEquals(Arrays.copyOfRange(data, 0, 4096), Arrays.copyOfRange(after, 0, 4096));
        assertArrayEquals(new byte[4096], Arrays.copyOfRange(after, 4096, 8192), "a punched page reads as zeros");
        assertArrayEquals(Arrays.copyOfRange(data, 8192, 65_536), Arrays.copyOfRange(after, 8192, 65_536));
        assertArrayEquals(Arrays.copyOfRange(data, data.length - 65_536, data.length),
                Arrays.copyOfRange(after, data.length - 65_536, data.length));
        long left = allocatedBytes(f);
        assertTrue(left <= before - punched + 65_536, "blocks given back: " + before + " -> " + left);
    }

    @Test
    void aMissingFileIsAnErrorNamingIt() {
        Path gone = dir.resolve("gone.fsp");
        IOException e = assertThrows(IOException.class, () -> PunchHoles.punch(gone, List.of(new long[] {0, 4096})));
        assertTrue(e.getMessage().contains(gone.toString()), e.getMessage());
    }

    /** st_blocks x 512, as stat(1) reports it: what the file takes on disk. */
    private static long allocatedBytes(Path f) throws Exception {
        Process p = new ProcessBuilder("stat", "-c", "%b %B", f.toString()).redirectErrorStream(true).start();
        String[] out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim().split(" ");
        assertEquals(0, p.waitFor(), String.join(" ", out));
        return Long.parseLong(out[0]) * Long.parseLong(out[1]);
    }
}
