package org.fanstore.runtime;

import java.util.function.Consumer;
import org.fanstore.runtime.fill.Fill;
import org.fanstore.runtime.liveness.PeerLiveness;
import org.fanstore.runtime.liveness.RankFailedException;
import org.fanstore.runtime.stats.RankStats;

/**
 * What a rank does once a node was lost after ready and it left the world (--on-node-loss continue;
 * liveness/README.md, "A node lost after ready"): says so once, asks no peer again (the fill reads their share from
 * the dataset's home), and names the lost ranks in its statistics and in one {@code FANSTORE-LOST} line for the
 * launcher. Commits and the job's end look at {@code MpiWorld.hasLeft} themselves.
 */
final class NodeLoss {
    private NodeLoss() {
    }

    /** Returns {@code e}. */
    static RankFailedException goOn(RuntimeConfig config, RankFailedException e, Fill fill, RankStats stats,
                     Consumer<String> lostLine) {
        long at = System.currentTimeMillis();
        System.err.println("fanstore rank " + config.rank() + ": " + e.getMessage() + "; going on without it"
                + " (--on-node-loss continue): what this node does not hold is read from the dataset's home from"
                + " now on");
        if (fill != null) {
            fill.peersDown(PeerLiveness.othersThan(config.rank(), config.size()));
        }
        if (stats != null) {
            stats.lost(e.ranks(), at);
        }
        StringBuilder ranks = new StringBuilder();
        for (int r : e.ranks()) {
            ranks.append(ranks.length() > 0 ? "," : "").append(r);
        }
        lostLine.accept("ranks=" + ranks + " at_ms=" + at + " why=" + e.getMessage().replace('\n', ' '));
        return e;
    }
}
