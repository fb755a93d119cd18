package org.fanstore.launcher;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.io.IOException;
import java.util.concurrent.Callable;
import java.util.function.UnaryOperator;

import org.fanstore.prep.format.DatasetVerifier;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.prep.store.ObjectStore;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code fanstore verify}: checks every partition and every file of a dataset; exit 1 on any fault. */
@Command(name = "verify", mixinStandardHelpOptions = true,
    description = "Check every partition (size, whole-file CRC, header, table) and every file's CRC32C.")
public final class VerifyCommand implements Callable<Integer> {
    @ParentCommand
    private FanstoreCommand root;

    @Parameters(index = "0", paramLabel = "OUT.fs", description = "Dataset directory written by fanstore prep, " +
        "or s3://BUCKET/PREFIX/NAME.fs (each partition is read whole, one at a time).")
    private String dataset;

    @Override
    public Integer call() throws Exception {
        final DatasetLocation location = DatasetArguments.location(dataset);
        if (!location.isObjectStore()) {
            return report(DatasetVerifier.verify(DatasetArguments.directory(location.path())), s -> s);
        }
        try (ObjectStore store = DatasetArguments.store();
             StoreDataset remote = StoreDataset.open(store, location)) {
            return report(DatasetVerifier.verify(remote.dir(), new DatasetVerifier.PartitionHook() {
                @Override
                public void before(final PartitionInfo partition) throws IOException {
                    remote.fill(partition);
                }

                @Override
                public void after(final PartitionInfo partition) throws IOException {
                    remote.release(partition);
                }
            }), remote::rename);
        }
    }

    private int report(final DatasetVerifier.Report report, final UnaryOperator<String> shown) {
        final PrintStream out = new PrintStream(root.out(), true, StandardCharsets.UTF_8);
        for (final DatasetVerifier.Fault fault : report.faults()) {
            out.println(shown.apply("FAULT " + fault));
        }
        if (report.ok()) {
            out.printf("verify: OK: %s: %d partitions, %d files, %d bytes%n", dataset, report.partitions(),
                report.files(), report.rawBytes());
            return 0;
        }
        out.printf("verify: FAILED: %s: %d fault(s); do not use this dataset: re-run fanstore prep or re-copy the " +
            "named partitions%n", dataset, report.faults().size());
        return Main.EXIT_FAULT;
    }
}
