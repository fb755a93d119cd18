package org.fanstore.launcher;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;

import org.fanstore.prep.format.Dataset;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PathBytes;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code fanstore ls}: lists a directory of a dataset offline. Names are printed as their raw bytes. */
@Command(name = "ls", mixinStandardHelpOptions = true,
    description = "List a directory of a dataset (names are written as raw bytes, one per line).")
public final class LsCommand implements Callable<Integer> {
    @ParentCommand
    private FanstoreCommand root;

    @Option(names = "-l", description = "Long format: mode, uid, gid, size, mtime (UTC), name, symlink target.")
    private boolean longFormat;

    @Option(names = "-R", description = "Recursive: every entry below PATH, as paths relative to PATH.")
    private boolean recursive;

    @Parameters(index = "0", paramLabel = "OUT.fs", description = "Dataset directory written by fanstore prep, " +
        "or s3://BUCKET/PREFIX/NAME.fs.")
    private String datasetDir;

    @Parameters(index = "1", paramLabel = "PATH", defaultValue = ".", description = "Path inside the dataset.")
    private String path;

    @Override
    public Integer call() throws Exception {
        try (DatasetArguments.Inspected in = DatasetArguments.inspect(datasetDir)) {
            final Dataset dataset = in.dataset();
            final byte[] target = DatasetArguments.path(dataset, path);
            final Dataset.Located located = dataset.lookup(target).orElseThrow(() ->
                new UserError(path + ": no such file or directory in " + datasetDir));
            final OutputStream out = new java.io.BufferedOutputStream(root.out(), 1 << 16);
            if (!located.entry().isDir()) {
                print(dataset, located.entry(), located.entry().path(), out);
            } else {
                list(dataset, target, new byte[0], out);
            }
            out.flush();
        }
        return 0;
    }

    private void list(final Dataset dataset, final byte[] dir, final byte[] shownPrefix, final OutputStream out)
        throws IOException {
        for (final PartitionEntry child : dataset.list(dir)) {
            final byte[] shown = PathBytes.child(shownPrefix, PathBytes.name(child.path()));
            print(dataset, child, shown, out);
            if (recursive && child.isDir()) {
                list(dataset, child.path(), shown, out);
            }
        }
    }

    private void print(final Dataset dataset, final PartitionEntry e, final byte[] shown, final OutputStream out)
        throws IOException {
        if (longFormat) {
            out.write(EntryFormat.longColumns(e).getBytes(StandardCharsets.UTF_8));
        }
        out.write(shown.length == 0 ? new byte[] {'.'} : shown);
        if (longFormat && e.isSymlink()) {
            out.write(" -> ".getBytes(StandardCharsets.US_ASCII));
            out.write(dataset.read(dataset.lookup(e.path()).orElseThrow()));
        }
        out.write('\n');
    }
}
