package org.fanstore.runtime.stats;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import org.fanstore.prep.format.TestVectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** shim.counters against the golden image the C shim checks too (tests/vectors/stats/shim-counters.bin). */
class ShimCountersTest {
    @TempDir
    Path dir;

    private static byte[] golden() throws IOException {
        return Files.readAllBytes(TestVectors.dir("stats").resolve("shim-counters.bin"));
    }

    @Test
    void freshFileIsTheGoldenHeaderWithZeroCounters() throws IOException {
        Path file = dir.resolve("shim.counters");
        ShimCounters fresh = ShimCounters.create(file);
        byte[] written = Files.readAllBytes(file);
        assertEquals(ShimCountersDescriptor.FILE_BYTES, written.length);
        assertArrayEquals(Arrays.copyOf(golden(), 16), Arrays.copyOf(written, 16), "magic, version, count");
        assertArrayEquals(new byte[48], Arrays.copyOfRange(written, 16, 64), "counters start at 0");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        for (int i = 0; i < ShimCountersDescriptor.COUNTER_COUNT; i++) {
            assertEquals(0, fresh.value(i));
        }
    }

    @Test
    void readsTheGoldenValuesAtTheSpecifiedOffsets() throws IOException {
        Path file = Files.write(dir.resolve("golden"), golden());
        ShimCounters c = ShimCounters.open(file);
        assertEquals(3, c.value(ShimCountersDescriptor.LOCAL_OPENS));
        assertEquals(0x0102030405060708L, c.value(ShimCountersDescriptor.LOCAL_BYTES));
        assertEquals(5, c.value(ShimCountersDescriptor.CACHE_OPENS));
        assertEquals(4096, c.value(ShimCountersDescriptor.CACHE_BYTES));
        assertEquals(1_500_000, c.value(ShimCountersDescriptor.WAKE_NANOS));
        assertEquals(25, c.value(ShimCountersDescriptor.WAKES));
    }

    @Test
    void refusesAnotherVersionOrLength() throws IOException {
        byte[] other = golden();
        other[8] = 1;
        Path wrongVersion = Files.write(dir.resolve("v1"), other);
        assertThrows(IOException.class, () -> ShimCounters.open(wrongVersion));
        Path shorter = Files.write(dir.resolve("short"), Arrays.copyOf(golden(), 48));
        assertThrows(IOException.class, () -> ShimCounters.open(shorter));
    }
}
