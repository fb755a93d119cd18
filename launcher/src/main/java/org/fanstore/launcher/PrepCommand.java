package org.fanstore.launcher;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import org.fanstore.prep.DatasetPacker;
import org.fanstore.prep.PrepOptions;
import org.fanstore.prep.PrepProgress;
import org.fanstore.prep.PrepResult;
import org.fanstore.prep.format.Compression;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code fanstore prep}: packs a directory tree into a dataset of partitions. */
@Command(name = "prep", mixinStandardHelpOptions = true,
    description = "Pack a directory tree into OUT.fs (manifest + partitions) for fanstore run.")
public final class PrepCommand implements Callable<Integer> {
    @ParentCommand
    private FanstoreCommand root;

    @Option(names = "--input", required = true, paramLabel = "DIR", description = "Dataset root directory.")
    private Path input;

    @Option(names = "--output", required = true, paramLabel = "OUT.fs", description = "Dataset directory to create.")
    private Path output;

    @Option(names = "--name", paramLabel = "NAME", description = "Dataset name (default: DIR's base name).")
    private String name;

    @Option(names = "--partitions", paramLabel = "N", defaultValue = "1",
        description = "Regular partitions, balanced by bytes (default: ${DEFAULT-VALUE}).")
    private int partitions;

    @Option(names = "--compress", paramLabel = "none|lz4|lz4hc", defaultValue = "none",
        description = "Per-file LZ4 (kept only when it saves >= ~5%%) (default: ${DEFAULT-VALUE}).")
    private Compression compress;

    @Option(names = "--broadcast", paramLabel = "REL_DIR",
        description = "Directory (relative to DIR) whose files every rank copies, e.g. val/. Repeatable.")
    private List<String> broadcast = new ArrayList<>();

    @Option(names = "--threads", paramLabel = "T", description = "Reader/compressor threads (default: cores).")
    private int threads = Runtime.getRuntime().availableProcessors();

    @Option(names = "--file-list", paramLabel = "F",
        description = "Pack only these paths (one per line, relative to DIR or absolute inside it).")
    private Path fileList;

    @Option(names = "--skip-unreadable", description = "Leave unreadable files out (with a warning) instead of " +
        "stopping.")
    private boolean skipUnreadable;

    @Option(names = "--force", description = "Replace OUT.fs if it is a fanstore dataset (nothing else).")
    private boolean force;

    @Override
    public Integer call() throws Exception {
        final PrintStream err = root.err();
        final PrepOptions options = new PrepOptions(input, output,
            name == null ? null : name.getBytes(StandardCharsets.UTF_8), partitions, compress, broadcast, threads,
            fileList, skipUnreadable, force);
        final boolean terminal = System.console() != null;
        final PrepResult result = DatasetPacker.prep(options,
            terminal ? PrepProgress.terminal() : PrepProgress.silent(),
            warning -> err.println("fanstore prep: warning: " + warning));
        final PrintStream out = new PrintStream(root.out(), true, StandardCharsets.UTF_8);
        out.println(result.summary());
        out.flush();
        return 0;
    }
}
