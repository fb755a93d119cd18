package org.fanstore.launcher;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import org.fanstore.prep.BucketUpload;
import org.fanstore.prep.DatasetPacker;
import org.fanstore.prep.PrepOptions;
import org.fanstore.prep.PrepProgress;
import org.fanstore.prep.PrepResult;
import org.fanstore.prep.format.Compression;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.prep.store.ObjectStore;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code fanstore prep}: packs a directory tree into a dataset of partitions. */
@Command(name = "prep", mixinStandardHelpOptions = true,
    description = "Pack a directory tree into OUT.fs (manifest + partitions) for fanstore run.")
public final class PrepCommand implements Callable<Integer> {
    @ParentCommand
    private FanstoreCommand root;

    @Option(names = "--input", required = true, paramLabel = "DIR",
        description = "Dataset root directory, or s3://BUCKET/PREFIX/ (every object under it is a file).")
    private String input;

    @Option(names = "--output", required = true, paramLabel = "OUT.fs",
        description = "Dataset directory to create, or s3://BUCKET/PREFIX/NAME.fs (packed in --work-dir, then " +
            "uploaded, the manifest last).")
    private String output;

    @Option(names = "--work-dir", paramLabel = "DIR",
        description = "Where an s3:// --output is packed before the upload; needs room for the packed dataset " +
            "(default: the launcher's temporary directory under $TMPDIR).")
    private Path workDir;

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

    @Option(names = "--threads", paramLabel = "T",
        description = "Reader/compressor threads (default: cores; 16 for an s3:// --input).")
    private Integer threads;

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
        final DatasetLocation in;
        final DatasetLocation out;
        try {
            in = DatasetLocation.tree(input);
            out = DatasetLocation.dataset(output);
        } catch (final IllegalArgumentException e) {
            throw new UserError(e.getMessage());
        }
        if (!in.isObjectStore() && !out.isObjectStore()) {
            print(DatasetPacker.prep(options(in.path(), out.path(), Runtime.getRuntime().availableProcessors()),
                progress("prep", "files"), warning -> err.println("fanstore prep: warning: " + warning)).summary());
            return 0;
        }
        try (ObjectStore store = DatasetArguments.store()) {
            if (out.isObjectStore() && store.head(out.bucket(), out.objectKey(Manifest.FILE_NAME)).isPresent() &&
                !force) {
                throw new UserError("--output " + out + " already exists: pass --force to replace it or choose " +
                    "another --output");
            }
            final Path stage = out.isObjectStore() ? stagingDir() : null;
            try {
                final Path local = stage == null ? out.path() : stage.resolve(out.name());
                final PrepResult result;
                if (in.isObjectStore()) {
                    result = DatasetPacker.prepFromBucket(store, in, options(null, local, BUCKET_READ_THREADS),
                        progress("prep", "files"), warning -> err.println("fanstore prep: warning: " + warning));
                } else {
                    result = DatasetPacker.prep(options(in.path(), local, Runtime.getRuntime().availableProcessors()),
                        progress("prep", "files"), warning -> err.println("fanstore prep: warning: " + warning));
                }
                if (stage == null) {
                    print(result.summary());
                    return 0;
                }
                final long started = System.nanoTime();
                final BucketUpload.Uploaded up = BucketUpload.upload(store, local, out, progress("upload", "parts"));
                print(result.summary().replace(local.toString(), out.toString()));
                print(String.format("fanstore prep: uploaded %d partitions (%d already there), the table and the " +
                    "manifest (last) to %s: %.1f MiB in %.2f s", up.partitions(), up.skipped(), out,
                    up.bytes() / (double)(1 << 20), (System.nanoTime() - started) / 1e9));
                return 0;
            } finally {
                if (stage != null) {
                    LauncherTmp.deleteTree(stage);
                }
            }
        }
    }

    /** Default --threads for an s3:// --input: readers wait on GETs, not on CPU (prep/README.md). */
    private static final int BUCKET_READ_THREADS = 16;

    private PrepOptions options(final Path in, final Path out, final int defaultThreads) {
        return new PrepOptions(in, out, name == null ? null : name.getBytes(StandardCharsets.UTF_8), partitions,
            compress, broadcast, threads == null ? defaultThreads : threads, fileList, skipUnreadable,
            force && !DatasetLocation.isObjectStore(output));
    }

    private static PrepProgress progress(final String task, final String units) {
        return System.console() != null ? PrepProgress.terminal(task, units) : PrepProgress.silent();
    }

    private void print(final String line) {
        final PrintStream out = new PrintStream(root.out(), true, StandardCharsets.UTF_8);
        out.println(line);
        out.flush();
    }

    /** A fresh directory under --work-dir (or the launcher's temporary directory) for the packed dataset. */
    private Path stagingDir() throws IOException {
        final Path base = workDir != null ? workDir : Path.of(System.getProperty("java.io.tmpdir"));
        if (!Files.isDirectory(base)) {
            throw new UserError("--work-dir " + base + " is not a directory: give one with room for the packed " +
                "dataset");
        }
        return Files.createTempDirectory(base, "fanstore-prep-");
    }
}
