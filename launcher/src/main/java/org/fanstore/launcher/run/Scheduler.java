package org.fanstore.launcher.run;

import java.util.Locale;

/** What started this {@code fanstore run}: nobody (ranks simulated on one machine), or a job scheduler. */
public enum Scheduler {
    /** No scheduler: --ranks N ranks on this machine, the launcher owns them all. */
    LOCAL,
    SLURM,
    OPENMPI,
    PMI;

    /**
     * True under a scheduler: each node runs its own launcher, so node 0 publishes its address in the shared
     * rendezvous directory, and every node must wait for the others before stopping its runtime.
     */
    public boolean spansNodes() {
        return this != LOCAL;
    }

    /** As named in messages. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
