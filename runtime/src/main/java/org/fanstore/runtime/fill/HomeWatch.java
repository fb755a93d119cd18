package org.fanstore.runtime.fill;

import org.fanstore.runtime.fill.source.RangeSource;
import org.fanstore.runtime.timing.Timing;

/**
 * {@link Fill}'s side of the home's outages (README.md, "A silent home"): each read of the home is admitted, and its
 * outcome told to the {@link HomeOutage} under the fill's lock; the outage's two lines (it stopped answering, it
 * answers again) are said here, once each. While no outage is on, a read costs one volatile load.
 */
final class HomeWatch {
    private final Fill fill;
    /** Mirrors the outage's "on", so a read with no outage takes no lock. */
    private volatile boolean on;

    HomeWatch(Fill fill) {
        this.fill = fill;
    }

    /** A read of the home may go; refused at once (DownException) while it is marked down. */
    void admit(RangeSource s, boolean reader) throws HomeOutage.DownException {
        if (!on) {
            return;
        }
        synchronized (fill.lock) {
            if (fill.outage.admit(fill.governor().now(), reader) == HomeOutage.Admit.REFUSE) {
                throw new HomeOutage.DownException(s.name() + " stopped answering and is not asked for up to "
                        + Timing.HOME_DOWN.toSeconds() + " s", null);
            }
        }
    }

    /**
     * The home gave no answer: marked down (the fill's transfers from it wait, readers are refused at once), and
     * the ONE line of the outage says so, naming it and what to do.
     */
    HomeOutage.DownException silent(RangeSource s, RangeSource.SourceDownException e) {
        if (e instanceof HomeOutage.DownException refused) {
            return refused;
        }
        boolean first;
        synchronized (fill.lock) {
            first = fill.outage.silent(fill.governor().now());
            on = true;
            fill.lock.notifyAll();
        }
        if (first) {
            System.err.println("fanstore rank " + fill.rank + ": the dataset's home " + s.name() + " stopped"
                    + " answering (" + e.getMessage() + "); files not on this node get EIO at once while it is marked"
                    + " down, and it is asked again every " + Timing.HOME_DOWN.toSeconds() + " s: check that the"
                    + " store is up and reachable");
        }
        return new HomeOutage.DownException(e.getMessage(), null);
    }

    /** The home answered (bytes, or any answer): the outage ends, and a line says so. */
    void answered(RangeSource s) {
        if (!on) {
            return;
        }
        long was;
        long refused;
        synchronized (fill.lock) {
            was = fill.outage.answered(fill.governor().now());
            refused = fill.outage.refused();
            on = false;
            fill.lock.notifyAll();
        }
        if (was >= 0) {
            System.err.printf("fanstore rank %d: the dataset's home %s answers again after %d s (%d reads got EIO"
                    + " at once meanwhile)%n", fill.rank, s.name(), Math.max(1, was / 1_000_000_000L), refused);
        }
    }
}
