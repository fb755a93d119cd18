package org.fanstore.runtime.output;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;

/**
 * A process that drains one staged file and is killed by {@link DirectoryDrainTest} in the middle of the copy.
 * Usage: {@code DrainCrashMain <staging file> <output dir> <key>}.
 */
public final class DrainCrashMain {
    private DrainCrashMain() {
    }

    public static void main(String[] args) throws Exception {
        Path staged = Path.of(args[0]);
        MapStaging staging = new MapStaging();
        staging.put(OutputObjects.FIRST, staged);
        DirectoryDrain drain = new DirectoryDrain(Path.of(args[1]), 0, 1);
        OutputApplier applier = new OutputApplier(new MapOutputNamespace(Set.of()), staging, drain, 0);
        applier.apply(MapOutputNamespace.file(args[2], Files.size(staged), 0, OutputObjects.FIRST, false));
        DirectoryDrain.Report report = drain.finish(Duration.ofSeconds(60));
        System.out.println("DONE " + report.failed());
    }
}
