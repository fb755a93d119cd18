package org.fanstore.launcher.run;

import java.lang.management.ManagementFactory;

/**
 * How many simulated nodes {@code --ranks N} may start on one machine. Each rank is a runtime JVM with its own
 * copy of the metadata and its own load threads: past a few per core they only thrash, and far past it the
 * machine is saturated before anything is served, so the bound is stated up front instead.
 */
final class RankLimit {
    /** Ranks per core that still make progress: loading is I/O and decompression, a core can interleave a few. */
    static final int PER_CORE = 4;
    /** Resident memory of an idle runtime JVM with a small namespace, with headroom. */
    static final long MIB_PER_RANK = 128;

    private RankLimit() {
    }

    /** The most ranks this machine runs: min(4 per core, RAM / 128 MiB), at least 2. */
    static int ofThisMachine() {
        long ramMib = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getTotalMemorySize() >> 20;
        return of(Runtime.getRuntime().availableProcessors(), ramMib);
    }

    static int of(int cores, long ramMib) {
        return (int) Math.max(2, Math.min((long) PER_CORE * cores, ramMib / MIB_PER_RANK));
    }

    /** The usage error for {@code ranks}, or null when it is within the limit. */
    static String check(int ranks) {
        int limit = ofThisMachine();
        if (ranks <= limit) {
            return null;
        }
        return "--ranks " + ranks + " is above this machine's limit of " + limit + " (" + PER_CORE + " per core on "
                + Runtime.getRuntime().availableProcessors() + " cores, " + MIB_PER_RANK + " MiB of RAM each; every"
                + " rank is a runtime JVM): --ranks simulates nodes on one machine; for more nodes run under srun or"
                + " mpirun";
    }
}
