package org.fanstore.launcher;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;

import org.fanstore.prep.format.Dataset;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PathBytes;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code fanstore stat}: every stored field of one entry, and where its body lies. */
@Command(name = "stat", mixinStandardHelpOptions = true,
    description = "Show one entry's stored metadata and where its body lies (does not follow symlinks).")
public final class StatCommand implements Callable<Integer> {
    @ParentCommand
    private FanstoreCommand root;

    @Parameters(index = "0", paramLabel = "OUT.fs", description = "Dataset directory written by fanstore prep, " +
        "or s3://BUCKET/PREFIX/NAME.fs.")
    private String datasetDir;

    @Parameters(index = "1", paramLabel = "PATH", description = "Path inside the dataset.")
    private String path;

    @Override
    public Integer call() throws Exception {
        try (DatasetArguments.Inspected in = DatasetArguments.inspect(datasetDir)) {
            final Dataset dataset = in.dataset();
            final Dataset.Located located = dataset.lookup(DatasetArguments.path(dataset, path)).orElseThrow(() ->
                new UserError(path + ": no such file or directory in " + datasetDir));
            final PartitionEntry e = located.entry();
            final PrintStream out = new PrintStream(root.out(), false, StandardCharsets.UTF_8);
            out.println("  path: " + e.pathString());
            out.println("  type: " + EntryFormat.typeName(e));
            out.printf("  mode: %07o (%s)%n", e.mode(), EntryFormat.modeString(e.mode()));
            out.println("   uid: " + e.uid() + "  gid: " + e.gid());
            out.println("  size: " + e.rawLength());
            out.println("stored: " + e.storedLength() + " (" + EntryFormat.codecName(e) + ")");
            out.println(" mtime: " + EntryFormat.isoTime(e) + " (" + e.mtimeSec() + "." +
                String.format("%09d", e.mtimeNsec()) + ")");
            out.printf("crc32c: %08x%n", e.crc32c());
            out.println("  body: " + located.partition().file().getFileName() + " at byte " + e.bodyOffset());
            if (e.isSymlink()) {
                out.println("target: " + PathBytes.display(dataset.read(located)));
            }
            out.flush();
        }
        return 0;
    }
}
