package org.fanstore.launcher;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import org.fanstore.prep.format.DatasetVerifier;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code fanstore verify}: checks every partition and every file of a dataset; exit 1 on any fault. */
@Command(name = "verify", mixinStandardHelpOptions = true,
    description = "Check every partition (size, whole-file CRC, header, table) and every file's CRC32C.")
public final class VerifyCommand implements Callable<Integer> {
    @ParentCommand
    private FanstoreCommand root;

    @Parameters(index = "0", paramLabel = "OUT.fs", description = "Dataset directory written by fanstore prep.")
    private Path dataset;

    @Override
    public Integer call() throws Exception {
        final DatasetVerifier.Report report = DatasetVerifier.verify(DatasetArguments.directory(dataset));
        final PrintStream out = new PrintStream(root.out(), true, StandardCharsets.UTF_8);
        for (final DatasetVerifier.Fault fault : report.faults()) {
            out.println("FAULT " + fault);
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
