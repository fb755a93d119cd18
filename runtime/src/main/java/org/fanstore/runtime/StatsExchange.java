package org.fanstore.runtime;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.fanstore.runtime.stats.RankStats;
import org.fanstore.runtime.world.MpiWorld;

/**
 * Brings every rank's statistics line to rank 0 at job end, over MPI, so that the launcher of node 0 can write
 * the whole job's document even under a scheduler, where each node's launcher sees only its own runtime. One
 * small all-gather (a line is ~1 KiB) after the final barrier, when no reader fetches any more.
 */
public final class StatsExchange {
    private StatsExchange() {
    }

    /** Rank 0: every rank's line, by rank; other ranks (or when the exchange fails): their own line. */
    public static List<String> gather(MpiWorld world, RankStats stats) {
        String mine = stats.line();
        if (world.size() == 1) {
            return List.of(mine);
        }
        try {
            byte[][] all = world.allGather(mine.getBytes(StandardCharsets.UTF_8), STATS_TIMEOUT);
            if (world.rank() != 0) {
                return List.of(mine);
            }
            List<String> lines = new ArrayList<>();
            for (byte[] line : all) {
                lines.add(new String(line, StandardCharsets.UTF_8));
            }
            return lines;
        } catch (IOException e) {
            System.err.println("fanstore rank " + world.rank() + ": statistics of the other ranks not collected: "
                    + e.getMessage());
            return List.of(mine);
        }
    }
}
