package org.fanstore.runtime.output;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;

/**
 * A process whose final drain pass copies an upper directory and is killed by {@link DirectoryDrainTest} in the
 * middle of the copy. Usage: {@code DrainCrashMain <upper dir> <output dir>}.
 */
public final class DrainCrashMain {
    private DrainCrashMain() {
    }

    public static void main(String[] args) throws Exception {
        DirectoryDrain drain = new DirectoryDrain(Path.of(args[1]), Path.of(args[0]), 0, 1,
                new MapOutputNamespace(Set.of()), key -> false);
        DirectoryDrain.Report report = drain.finish(Duration.ofSeconds(60));
        System.out.println("DONE " + report.failed());
    }
}
