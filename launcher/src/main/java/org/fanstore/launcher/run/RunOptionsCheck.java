package org.fanstore.launcher.run;

import java.nio.file.Files;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.runtime.RuntimeConfig;

/** The checks of {@code fanstore run}'s options, before anything starts: a line for the user, or null. */
final class RunOptionsCheck {
    private RunOptionsCheck() {
    }

    static String problem(RunCommand run, DatasetLocation dataset, boolean underScheduler) {
        if (!dataset.isObjectStore() && !Files.isRegularFile(dataset.path().resolve(Manifest.FILE_NAME))) {
            return "--data " + run.data + " is not a prepared dataset (no manifest.txt): run fanstore prep first";
        }
        if (run.loadTimeoutSeconds < 1) {
            return "--load-timeout must be at least 1 second, got " + run.loadTimeoutSeconds;
        }
        if (run.ranks != null && run.ranks < 1) {
            return "--ranks must be >= 1, got " + run.ranks;
        }
        if (run.ranks != null && RankLimit.check(run.ranks) != null) {
            return RankLimit.check(run.ranks);
        }
        if (run.joinTimeoutSeconds < 1) {
            return "--join-timeout must be >= 1 s, got " + run.joinTimeoutSeconds;
        }
        int size = run.ranks == null ? 1 : run.ranks;
        if (run.onlyRank != null && (underScheduler || run.onlyRank < 0 || run.onlyRank >= size)) {
            return underScheduler ? "--only-rank is for --ranks mode; under a scheduler choose tasks with it"
                    : "--only-rank " + run.onlyRank + " is outside 0.." + (size - 1);
        }
        if (!underScheduler && run.replicas >= size && run.replicas > 0) {
            return "--replicas " + run.replicas + " needs more than " + run.replicas + " ranks";
        }
        if (!run.mount.startsWith("/") || run.mount.length() < 2 || run.mount.endsWith("/")) {
            return "--mount must be an absolute path like /fanstore, got '" + run.mount + "'";
        }
        String mountProblem = MountCheck.problem(run.mount);
        if (mountProblem != null) {
            return mountProblem;
        }
        try {
            RuntimeConfig.Unpack.of(run.unpack);
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        if (!run.prefetch.equals("on") && !run.prefetch.equals("off")) {
            return "--prefetch must be on or off, got '" + run.prefetch + "'";
        }
        try {
            RuntimeConfig.TableLoad.of(run.tableLoad);
            RuntimeConfig.OnNodeLoss.of(run.onNodeLoss);
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        try {
            org.fanstore.runtime.placement.LocalCapacity.parse(run.localCapacity);
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        if (run.graceSeconds < 0) {
            return "--grace must be >= 0 seconds, got " + run.graceSeconds;
        }
        if (run.cacheMb != null && run.cacheMb < 1) {
            return "--cache-mb must be >= 1";
        }
        if (run.statsFile != null && !Files.isDirectory(run.statsFile.toAbsolutePath().getParent())) {
            return "--stats " + run.statsFile + ": its directory does not exist";
        }
        try {
            org.fanstore.runtime.stats.StatsTicker.intervalMillis(System.getenv());
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        if (run.outputDir != null && !Files.isDirectory(run.outputDir)) {
            return "--output-dir " + run.outputDir + " is not a directory";
        }
        return null;
    }
}
