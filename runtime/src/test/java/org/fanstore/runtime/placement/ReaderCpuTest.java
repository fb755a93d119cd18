package org.fanstore.runtime.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * When background work gives way to this node's readers: readers read (their bytes went up) and the CPUs were
 * contended, judged once per window from the kernel's files (here: files written by the test in their formats),
 * and held for a while once seen, since yielding removes the contention it measured.
 */
class ReaderCpuTest {
    private static final long W = ReaderCpu.WINDOW_NANOS;
    private static final long START = 1_000_000_000_000L;

    @TempDir
    Path dir;

    private final AtomicLong readerBytes = new AtomicLong();
    private long stallMicros;

    private Path psi() throws IOException {
        Path p = dir.resolve("cpu");
        Files.writeString(p, "some avg10=1.00 avg60=2.00 avg300=3.00 total=" + stallMicros + "\n"
                + "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
        return p;
    }

    /** One window later: readers read {@code read} bytes and something waited for a CPU {@code share} of it. */
    private boolean window(ReaderCpu cpu, long at, long read, double share) throws IOException {
        readerBytes.addAndGet(read);
        stallMicros += (long) (share * W / 1000);
        psi();
        return cpu.readersStarved(at);
    }

    @Test
    void readersReadingOnContendedCpusMakeBackgroundYield() throws IOException {
        ReaderCpu cpu = new ReaderCpu(readerBytes::get, psi(), dir.resolve("no-stat"));
        assertFalse(cpu.readersStarved(START), "no window measured yet");
        assertTrue(window(cpu, START + W, 1 << 20, 0.6), "readers read while tasks waited 60% of the window");
        assertEquals(0, cpu.starvedNanos(), "the first starved window is counted when the next one is judged");
        assertTrue(window(cpu, START + 2 * W, 1 << 20, 0.9));
        assertEquals(W, cpu.starvedNanos());
    }

    @Test
    void idleReadersOrAQuietNodeDoNot() throws IOException {
        ReaderCpu cpu = new ReaderCpu(readerBytes::get, psi(), dir.resolve("no-stat"));
        cpu.readersStarved(START);
        assertFalse(window(cpu, START + W, 0, 1.0), "nobody read: the pull prepares later epochs at full speed");
        assertFalse(window(cpu, START + 2 * W, 1 << 20, 0.1), "readers read, but CPUs were to spare");
    }

    @Test
    void contentionOnceSeenHoldsWhileReadersRead() throws IOException {
        ReaderCpu cpu = new ReaderCpu(readerBytes::get, psi(), dir.resolve("no-stat"));
        cpu.readersStarved(START);
        assertTrue(window(cpu, START + W, 1, 0.5));
        long t = START + W;
        // background work yields, the node goes quiet: still yielding for the hold, as long as readers read
        while (t + W - (START + W) < ReaderCpu.HOLD_NANOS) {
            t += W;
            assertTrue(window(cpu, t, 1, 0.0), "inside the hold at " + (t - START) / 1_000_000 + " ms");
        }
        t += W;
        assertFalse(window(cpu, t, 1, 0.0), "the hold passed without contention: judged afresh");
        assertTrue(window(cpu, t + W, 1, 0.3), "contended again");
        assertFalse(window(cpu, t + 2 * W, 0, 0.0), "readers stopped: no hold for them");
    }

    @Test
    void judgedOncePerWindow() throws IOException {
        ReaderCpu cpu = new ReaderCpu(readerBytes::get, psi(), dir.resolve("no-stat"));
        cpu.readersStarved(START);
        assertFalse(window(cpu, START + W / 2, 1, 1.0), "half a window: the last verdict stands");
        assertTrue(cpu.readersStarved(START + W), "the window is over: judged on what it held");
    }

    @Test
    void withoutPressureFilesBusyCpusInProcStatCount() throws IOException {
        Path stat = dir.resolve("stat");
        ReaderCpu cpu = new ReaderCpu(readerBytes::get, dir.resolve("no-psi"), stat);
        // user nice system idle iowait irq softirq steal guest guest_nice
        Files.writeString(stat, "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 50 0 50 400 0 0 0 0 0 0\n");
        readerBytes.set(1);
        cpu.readersStarved(START);
        Files.writeString(stat, "cpu  190 0 195 805 0 0 5 0 0 0\n");  // 190 of 200 jiffies busy: 95%
        readerBytes.set(2);
        assertTrue(cpu.readersStarved(START + W));
        Files.writeString(stat, "cpu  240 0 245 855 50 0 10 0 0 0\n");  // 105 of 205 busy
        readerBytes.set(3);
        assertTrue(cpu.readersStarved(START + 2 * W), "still held");
        readerBytes.set(4);
        assertFalse(cpu.readersStarved(START + 2 * W + ReaderCpu.HOLD_NANOS + W), "idle and the hold passed");
    }

    @Test
    void parsesTheKernelsOwnFiles() throws IOException {
        long[] jiffies = ReaderCpu.cpuJiffies(Files.readString(Path.of("/proc/stat")));
        assertNotNull(jiffies, "/proc/stat has an aggregate cpu line");
        assertTrue(jiffies[1] > 0 && jiffies[0] <= jiffies[1]);
        Path psi = Path.of("/proc/pressure/cpu");
        assumeTrue(Files.isReadable(psi), "this kernel has no pressure stall information");
        assertTrue(ReaderCpu.psiSomeTotal(Files.readString(psi)) >= 0, "a some line with total=");
        assertEquals(-1, ReaderCpu.psiSomeTotal("full avg10=0.00 total=5\n"), "no some line");
    }
}
