package org.fanstore.runtime.placement;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.LongSupplier;

/**
 * Whether this node's readers are short of CPU now: they read in the last window (the bytes opened by readers,
 * directly or through the runtime, went up) while the node's CPUs were contended. Background work that only
 * prepares later epochs (pull ranges, serving peers' pull ranges) yields then: a warm epoch reading while other
 * ranks' pulls ran measured 0.14-0.55x native on 2 cores, and the pull's kernel work (loopback TCP, page cache)
 * is beyond the reach of a nice value.
 *
 * <p>Contention is the kernel's pressure stall information, {@code /proc/pressure/cpu} ("some": the share of
 * time at least one runnable task waited for a CPU), which counts what any process on the node wants, not only
 * this JVM's threads. Where it is missing (a kernel without PSI), {@code /proc/stat}: CPUs busy for nearly all
 * of the window. The verdict is sampled at most once per {@link #WINDOW_NANOS}, so asking costs a volatile read
 * in between.
 */
public final class ReaderCpu {
    /** One verdict per this long: shorter than an epoch's pass, longer than the scheduler's tick. */
    static final long WINDOW_NANOS = 50_000_000L;
    /** PSI "some" at or above this share of the window: readers wait for CPUs. */
    static final double STALL_SHARE = 0.25;
    /** After a contended window, readers count as short of CPU this long while they read (then judged again). */
    static final long HOLD_NANOS = 1_000_000_000L;
    /** Without PSI: CPUs busy at or above this share of the window. */
    static final double BUSY_SHARE = 0.90;

    private final LongSupplier readerBytes;
    private final Path pressure;
    private final Path stat;
    private volatile long sampledAt;
    private volatile boolean primed;
    private long lastBytes;
    private long lastStall = -1;
    private long lastBusy = -1;
    private long lastTotal = -1;
    private volatile boolean contended;
    private long busyAt = Long.MIN_VALUE / 2;
    private volatile long starvedNanos;
    /** When a sample last saw readers read ({@link System#nanoTime()}); long ago until one does. */
    private volatile long readAt = Long.MIN_VALUE / 2;

    /** The node's own files: {@code /proc/pressure/cpu}, else {@code /proc/stat}. */
    public ReaderCpu(LongSupplier readerBytes) {
        this(readerBytes, Path.of("/proc/pressure/cpu"), Path.of("/proc/stat"));
    }

    ReaderCpu(LongSupplier readerBytes, Path pressure, Path stat) {
        this.readerBytes = readerBytes;
        this.pressure = Files.isReadable(pressure) ? pressure : null;
        this.stat = stat;
    }

    /** True while readers read and the node's CPUs are contended ({@code now}: {@link System#nanoTime()}). */
    public boolean readersStarved(long now) {
        if (!primed || now - sampledAt >= WINDOW_NANOS) {
            synchronized (this) {
                if (!primed || now - sampledAt >= WINDOW_NANOS) {
                    sample(now);
                }
            }
        }
        return contended;
    }

    /** True when no sample saw this node's readers read in the last {@code forNanos} (sampled as above). */
    public boolean idle(long now, long forNanos) {
        readersStarved(now);
        return now - readAt >= forNanos;
    }

    /** How long readers were judged short of CPU so far (whole windows, up to the last sample). */
    public long starvedNanos() {
        return starvedNanos;
    }

    private void sample(long now) {
        long window = primed ? now - sampledAt : 0;
        sampledAt = now;
        primed = true;
        long bytes = readerBytes.getAsLong();
        boolean reading = bytes != lastBytes;
        lastBytes = bytes;
        if (reading) {
            readAt = now;
        }
        boolean busy = pressure != null ? stalled(window) : busy();
        if (busy && reading) {
            busyAt = now;
        }
        // Once seen, contention is assumed for HOLD_NANOS while readers read: background work that yields
        // takes the contention away, and judging each window afresh would let it straight back in.
        if (contended) {
            starvedNanos += window;
        }
        contended = reading && (busy || now - busyAt < HOLD_NANOS);
    }

    /** PSI: microseconds of "some" stall in the window over its length. */
    private boolean stalled(long windowNanos) {
        long total = psiSomeTotal(read(pressure));
        long before = lastStall;
        lastStall = total;
        return before >= 0 && total >= 0 && windowNanos > 0 && (total - before) * 1000.0 / windowNanos >= STALL_SHARE;
    }

    /** /proc/stat: the first line's busy jiffies over all jiffies since the last sample. */
    private boolean busy() {
        long[] t = cpuJiffies(read(stat));
        if (t == null) {
            return false;
        }
        long busyBefore = lastBusy;
        long totalBefore = lastTotal;
        lastBusy = t[0];
        lastTotal = t[1];
        long span = t[1] - totalBefore;
        return busyBefore >= 0 && span > 0 && (t[0] - busyBefore) / (double) span >= BUSY_SHARE;
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException | RuntimeException e) {
            return "";                            // unreadable: no verdict of contention from it
        }
    }

    /** The {@code total=} of the "some" line of a PSI file (microseconds), or -1. */
    static long psiSomeTotal(String psi) {
        for (String line : psi.split("\n")) {
            if (line.startsWith("some ")) {
                for (String field : line.split(" ")) {
                    if (field.startsWith("total=")) {
                        try {
                            return Long.parseLong(field.substring("total=".length()).trim());
                        } catch (NumberFormatException e) {
                            return -1;
                        }
                    }
                }
            }
        }
        return -1;
    }

    /** {busy, total} jiffies of the aggregate "cpu " line of /proc/stat (idle and iowait are not busy), or null. */
    static long[] cpuJiffies(String procStat) {
        for (String line : procStat.split("\n")) {
            if (line.startsWith("cpu ")) {
                String[] f = line.trim().split("\\s+");
                long total = 0;
                long idle = 0;
                try {
                    for (int i = 1; i < f.length && i <= 8; i++) {  // user..steal; guest is inside user already
                        long v = Long.parseLong(f[i]);
                        total += v;
                        if (i == 4 || i == 5) {
                            idle += v;
                        }
                    }
                } catch (NumberFormatException e) {
                    return null;
                }
                return new long[] {total - idle, total};
            }
        }
        return null;
    }
}
