package org.fanstore.launcher;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.TableInfo;
import org.fanstore.prep.format.table.DatasetTable;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.prep.store.ObjectStore;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code fanstore upgrade}: gives a dataset prepped before metadata tables existed its {@code namespace.tbl}, in
 * place, from its partitions' file tables (bodies are not read or rewritten), then records it in a version 2
 * manifest. Both files are written under temporary names and renamed, so an interrupted upgrade leaves the dataset
 * as it was (run it again). It also rebuilds a table that is missing or damaged.
 */
@Command(name = "upgrade", mixinStandardHelpOptions = true,
    description = "Add (or rebuild) the metadata table of a dataset prepped by an older fanstore, in place.")
public final class UpgradeCommand implements Callable<Integer> {
    @ParentCommand
    private FanstoreCommand root;

    @Parameters(index = "0", paramLabel = "OUT.fs", description = "Dataset directory written by fanstore prep, " +
        "or s3://BUCKET/PREFIX/NAME.fs (the table is uploaded, then the manifest).")
    private String dataset;

    @Override
    public Integer call() throws Exception {
        final DatasetLocation location = DatasetArguments.location(dataset);
        if (!location.isObjectStore()) {
            return upgrade(DatasetArguments.directory(location.path()), null);
        }
        try (ObjectStore store = DatasetArguments.store();
             StoreDataset remote = StoreDataset.open(store, location)) {
            return upgrade(remote.dir(), remote);
        }
    }

    private int upgrade(final Path dir, final StoreDataset remote) throws IOException {
        final Manifest old = Manifest.read(dir);
        final long started = System.nanoTime();
        final Manifest upgraded = DatasetTable.write(dir, old);
        upgraded.write(dir);
        if (remote != null) {
            remote.uploadTableAndManifest();
        }
        final PrintStream out = new PrintStream(root.out(), true, StandardCharsets.UTF_8);
        out.printf("fanstore upgrade: %s: %s %s (%d bytes) for %d files in %.2f s%n", dataset,
            old.table() == null ? "added" : "rebuilt", TableInfo.FILE_NAME, upgraded.table().bytes(), old.files(),
            (System.nanoTime() - started) / 1e9);
        return 0;
    }
}
