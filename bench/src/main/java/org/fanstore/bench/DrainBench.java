package org.fanstore.bench;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.fanstore.runtime.output.DirectoryDrain;
import org.fanstore.runtime.output.OutputObjects;
import org.fanstore.runtime.output.OutputRecord;

/**
 * The drain's throughput: copies every file of a staging directory to an output directory the way a runtime does
 * at the end of a job (partial name, fsync, CRC32C re-read, rename, directory fsync) and prints the wall time.
 * Usage: {@code DrainBench <staging dir> <output dir>}; see bench/drain-throughput.sh.
 */
public final class DrainBench {
    private DrainBench() {
    }

    public static void main(String[] args) throws Exception {
        Path staging = Path.of(args[0]);
        DirectoryDrain drain = new DirectoryDrain(Path.of(args[1]), 0, 1);
        long start = System.nanoTime();
        long id = OutputObjects.FIRST;
        long bytes = 0;
        try (var files = Files.list(staging)) {
            for (Path f : files.sorted().toList()) {
                long size = Files.size(f);
                bytes += size;
                drain.applied(new OutputRecord(OutputRecord.Kind.FILE, f.getFileName().toString().getBytes(UTF_8),
                        null, size, 0100644, 0, 0, id++, false), f);
            }
        }
        DirectoryDrain.Report report = drain.finish(Duration.ofMinutes(30));
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("drain files=%d bytes=%d seconds=%.3f MBps=%.0f failed=%s%n", report.copiedFiles(), bytes,
                seconds, bytes / 1e6 / seconds, report.failed());
        System.exit(report.failed().isEmpty() ? 0 : 1);
    }
}
