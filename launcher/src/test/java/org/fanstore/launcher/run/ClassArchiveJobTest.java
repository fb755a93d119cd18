package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runtime JVMs of a real job map their classes from the class archive the build dumped (startup/README.md):
 * fails when the build made none, or when the key the launcher computes for its runtimes is not the build's.
 */
class ClassArchiveJobTest {
    @TempDir
    Path work;

    @Test
    void aJobsRuntimesLoadTheirClassesFromTheBuildsArchive() throws Exception {
        SampleDataset ds = SampleDataset.make(work, "cds", 12, 3);
        // -Xlog names no sharing option, so the launcher still adds the archive; %p: one log per rank JVM
        Map<String, String> env = Map.of("FANSTORE_RUNTIME_JAVA_OPTS",
                "-Xlog:class+load=info:file=" + work.resolve("load-%p.log"));
        FanstoreProcess.Result r = FanstoreProcess.run(work, env, 180, "run", "--ranks", "2", "--data",
                ds.data().toString(), "--", "sh", "-c", ds.readEverything());
        assertEquals(0, r.status(), r.stderr());
        assertTrue(ds.tasksThatReadEverything(r.stdout()) >= 1, r.stdout());
        assertTrue(!r.stderr().contains("cds") && !r.stderr().contains("Shar"), "no CDS message reaches the user:\n"
                + r.stderr());
        List<Path> logs;
        try (Stream<Path> s = Files.list(work)) {
            logs = s.filter(p -> p.getFileName().toString().startsWith("load-")).toList();
        }
        assertEquals(2, logs.size(), "one class-loading log per runtime: " + logs);
        for (Path log : logs) {
            List<String> ours = Files.readAllLines(log).stream().filter(l -> l.contains(" org.fanstore.")).toList();
            long shared = ours.stream().filter(l -> l.contains("source: shared objects file")).count();
            assertTrue(ours.size() > 50, log + ": " + ours.size() + " fanstore classes loaded");
            assertTrue(shared * 10 >= ours.size() * 8, log + ": only " + shared + " of " + ours.size()
                    + " fanstore classes came from the archive");
        }
    }
}
