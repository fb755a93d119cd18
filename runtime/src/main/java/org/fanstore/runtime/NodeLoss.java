package org.fanstore.runtime;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.fanstore.runtime.fill.Fill;
import org.fanstore.runtime.liveness.PeerLiveness;
import org.fanstore.runtime.liveness.RankFailedException;
import org.fanstore.runtime.output.LocalOutputNamespace;
import org.fanstore.runtime.output.OutputRecord;
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
        System.err.println(RankFailedException.logLine(config.rank(), e.getMessage()) + "; going on without it"
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

    /**
     * At the end, after the drain's final pass, with --output-dir and a node lost: the outputs whose bytes only the
     * lost ranks held and that are not in the output directory (never drained) are named once on stderr and listed,
     * one key a line, in {@code OUTPUT/.fanstore-lost-outputs} (written whole; every survivor writes the same list).
     */
    static void lostOutputs(RuntimeConfig config, int[] lost, LocalOutputNamespace namespace) {
        if (lost.length == 0 || namespace == null || config.outputDir() == null) {
            return;
        }
        List<String> gone = new ArrayList<>();
        for (OutputRecord r : namespace.filesHeldBy(h -> IntStream.of(lost).anyMatch(l -> l == h))) {
            String key = new String(r.key(), StandardCharsets.UTF_8);
            Path drained = config.outputDir().resolve(key);
            try {
                if (Files.isRegularFile(drained) && Files.size(drained) == r.size()) {
                    continue;
                }
            } catch (IOException e) {
                // not there: lost
            }
            gone.add(key);
        }
        Collections.sort(gone);
        Path list = config.outputDir().resolve(LOST_OUTPUTS);
        try {
            Path tmp = Files.createTempFile(config.outputDir(), LOST_OUTPUTS, ".tmp");
            Files.write(tmp, gone, StandardCharsets.UTF_8);
            Files.move(tmp, list, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            System.err.println("fanstore rank " + config.rank() + ": cannot write " + list + ": " + e.getMessage());
        }
        if (!gone.isEmpty()) {
            System.err.println("fanstore rank " + config.rank() + ": " + gone.size() + " output file(s) held only by"
                    + " the lost rank(s) were not drained and are lost: " + String.join(", ", gone.subList(0,
                    Math.min(5, gone.size()))) + (gone.size() > 5 ? ", ..." : "") + " (all listed in " + list + ")");
        }
    }

    /** The list of lost outputs in --output-dir. */
    static final String LOST_OUTPUTS = ".fanstore-lost-outputs";
}
