package org.fanstore.launcher;

import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import java.util.concurrent.Callable;

import org.fanstore.prep.format.Dataset;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code fanstore cat}: a file's raw bytes to stdout, CRC-checked (symlinks inside the dataset are followed). */
@Command(name = "cat", mixinStandardHelpOptions = true,
    description = "Write a file's raw bytes to stdout (decompressed, CRC32C-checked).")
public final class CatCommand implements Callable<Integer> {
    @ParentCommand
    private FanstoreCommand root;

    @Parameters(index = "0", paramLabel = "OUT.fs", description = "Dataset directory written by fanstore prep, " +
        "or s3://BUCKET/PREFIX/NAME.fs.")
    private String datasetDir;

    @Parameters(index = "1", paramLabel = "PATH", description = "File inside the dataset.")
    private String path;

    @Override
    public Integer call() throws Exception {
        try (DatasetArguments.Inspected in = DatasetArguments.inspect(datasetDir)) {
            final Dataset dataset = in.dataset();
            final byte[] bytes = DatasetArguments.path(dataset, path);
            if (dataset.lookup(bytes).isEmpty()) {
                throw new UserError(path + ": no such file in " + datasetDir);
            }
            final Dataset.Located located = dataset.resolve(bytes).orElseThrow(() ->
                new UserError(path + ": symlink does not lead to an entry inside the dataset"));
            if (!located.entry().isFile()) {
                throw new UserError(path + " is a directory: use fanstore ls");
            }
            in.fetch(located);
            // A first pass checks the CRC32C, so a corrupt body writes nothing at all (memory stays bounded for
            // large files, at the cost of reading twice); the second pass checks it again as it streams.
            dataset.copy(located, Channels.newChannel(OutputStream.nullOutputStream()));
            final WritableByteChannel out = Channels.newChannel(root.out());
            dataset.copy(located, out);
            root.out().flush();
        }
        return 0;
    }
}
