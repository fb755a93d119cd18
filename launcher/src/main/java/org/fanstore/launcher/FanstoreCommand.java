package org.fanstore.launcher;

import java.io.OutputStream;
import java.io.PrintStream;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** The root {@code fanstore} command; each subcommand is one class, listed here. */
@Command(
    name = "fanstore",
    mixinStandardHelpOptions = true,
    version = "fanstore " + FanstoreCommand.VERSION,
    description = "A transient runtime file system for distributed deep-learning training.",
    subcommands = {
        PrepCommand.class,
        VerifyCommand.class,
        UpgradeCommand.class,
        LsCommand.class,
        StatCommand.class,
        CatCommand.class,
        org.fanstore.launcher.run.RunCommand.class,
    })
public final class FanstoreCommand implements Runnable {
    public static final String VERSION = "0.1.0-SNAPSHOT";

    @Spec
    private CommandSpec spec;

    private final OutputStream out;
    private final PrintStream err;

    FanstoreCommand(final OutputStream out, final PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /** Standard output as bytes (binary-safe). */
    public OutputStream out() {
        return out;
    }

    public PrintStream err() {
        return err;
    }

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "missing command: " +
            String.join(", ", spec.subcommands().keySet()));
    }
}
