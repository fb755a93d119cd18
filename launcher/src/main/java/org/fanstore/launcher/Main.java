package org.fanstore.launcher;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.concurrent.atomic.AtomicBoolean;

import org.fanstore.prep.PrepException;
import org.fanstore.prep.format.BadManifestException;
import org.fanstore.prep.format.CorruptPartitionException;
import org.fanstore.runtime.PlainMessages;

import picocli.CommandLine;

/**
 * Entry point of the {@code fanstore} command. Exit codes: 0 success, 1 bad data or an I/O failure, 2 a user
 * error (bad option, missing path). User errors are one line on stderr, never a stack trace; set
 * {@code FANSTORE_DEBUG=1} to see stack traces of unexpected failures.
 */
public final class Main {
    /** Exit code for data faults (verify found corruption) and I/O failures. */
    public static final int EXIT_FAULT = 1;
    /** Exit code for errors the user can fix. */
    public static final int EXIT_USER_ERROR = 2;

    /** The out-of-memory line is said once, by whichever thread meets the error first. */
    private static final AtomicBoolean OUT_OF_MEMORY_SAID = new AtomicBoolean();

    private Main() {
    }

    public static void main(final String[] args) {
        LauncherTmp.install();
        // a thread that dies of what it did not catch says one line, never the JVM's trace
        Thread.setDefaultUncaughtExceptionHandler(
            (thread, e) -> uncaught(commandOf(args), thread, e, System.err, OUT_OF_MEMORY_SAID));
        System.exit(execute(args, System.out, System.err));
    }

    /** Runs one command with the given streams (stdout is binary: {@code cat} writes raw bytes to it). */
    public static int execute(final String[] args, final OutputStream out, final PrintStream err) {
        final FanstoreCommand root = new FanstoreCommand(out, err);
        final CommandLine cl = new CommandLine(root);
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        cl.setUsageHelpAutoWidth(true);
        cl.setParameterExceptionHandler((ex, args1) -> {
            err.println(name(ex.getCommandLine()) + ": " + ArgumentAdvice.explain(ex, args) + " (see '" +
                ex.getCommandLine().getCommandSpec().qualifiedName() + " --help')");
            return EXIT_USER_ERROR;
        });
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> report(ex, commandLine, err));
        int code;
        try {
            code = cl.execute(args);
        } catch (final OutOfMemoryError e) {
            code = outOfMemory(commandOf(args), err);
        }
        err.flush();
        return code;
    }

    /**
     * The launcher JVM's heap ran out (a huge tree to prep, a tiny -Xmx): one line saying how to give it more,
     * never the JVM's trace. What the command wrote is cleaned as for any failure (prep's temporary directory).
     */
    static int outOfMemory(final String command, final PrintStream err) {
        return outOfMemory(command, err, OUT_OF_MEMORY_SAID);
    }

    static int outOfMemory(final String command, final PrintStream err, final AtomicBoolean said) {
        if (!said.compareAndSet(false, true)) {
            return EXIT_FAULT;
        }
        final long maxMib = Runtime.getRuntime().maxMemory() >> 20;
        err.println(command + ": out of memory: the launcher's Java heap (at most " + maxMib + " MiB here) is too"
            + " small for this command; give it more with FANSTORE_JAVA_OPTS=-Xmx<size> (prep holds about 200 bytes"
            + " per file of the tree: 14M files need about 3g), or run it on a node with more memory");
        return EXIT_FAULT;
    }

    /**
     * What a thread that died of what it did not catch says: the out-of-memory line if the heap ran out (the error
     * itself or a cause), else one internal-error line. Once the out-of-memory line is said, a later death in another
     * thread says nothing: with the heap gone, other threads fail in ways that are its consequence (a lock's state
     * half-built, a message never allocated), and a second line would bury the one that tells the user what to do.
     */
    static void uncaught(final String command, final Thread thread, final Throwable e, final PrintStream err,
        final AtomicBoolean said) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof OutOfMemoryError) {
                outOfMemory(command, err, said);
                return;
            }
        }
        if (said.get()) {
            return;
        }
        err.println("fanstore: internal error in " + thread.getName() + ": "
            + PlainMessages.plain(e.getMessage() == null ? "no details" : e.getMessage())
            + " (please report it; FANSTORE_DEBUG=1 shows details)");
        if (System.getenv("FANSTORE_DEBUG") != null) {
            e.printStackTrace(err);
        }
    }

    /** "fanstore prep" for {@code prep --input ...}: the command a line speaks for before picocli has parsed it. */
    private static String commandOf(final String[] args) {
        return args.length > 0 && !args[0].startsWith("-") ? "fanstore " + args[0] : "fanstore";
    }

    /** One line to the user, without Java class names a cause's message may carry. */
    private static void say(final PrintStream err, final String line) {
        err.println(PlainMessages.plain(line));
    }

    private static int report(final Exception ex, final CommandLine commandLine, final PrintStream err) {
        final String who = name(commandLine);
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof OutOfMemoryError) {
                return outOfMemory(who, err);
            }
        }
        if (ex instanceof PrepException || ex instanceof UserError || ex instanceof BadManifestException) {
            say(err, who + ": " + ex.getMessage());
            return EXIT_USER_ERROR;
        }
        if (ex instanceof CorruptPartitionException) {
            say(err, who + ": corrupt partition: " + ex.getMessage());
            return EXIT_FAULT;
        }
        if (ex instanceof IOException) {
            say(err, who + ": " + describe((IOException)ex));
            debug(ex, err);
            return EXIT_FAULT;
        }
        say(err, who + ": internal error: " + (ex.getMessage() == null ? "no details" : ex.getMessage()) +
            " (please report it; FANSTORE_DEBUG=1 shows details)");
        debug(ex, err);
        return EXIT_FAULT;
    }

    /** An I/O failure in words, naming the path: Java's exception names mean nothing to a user. */
    static String describe(final IOException e) {
        if (e instanceof NoSuchFileException f) {
            return "no such file or directory: " + f.getFile() + suffix(f.getReason());
        }
        if (e instanceof AccessDeniedException f) {
            return "permission denied: " + f.getFile() + suffix(f.getReason());
        }
        if (e instanceof FileAlreadyExistsException f) {
            return "already exists: " + f.getFile();
        }
        if (e instanceof NotDirectoryException f) {
            return "not a directory: " + f.getFile();
        }
        if (e instanceof DirectoryNotEmptyException f) {
            return "directory not empty: " + f.getFile();
        }
        if (e instanceof FileSystemException f && f.getFile() != null) {
            return f.getFile() + ": " + (f.getReason() == null ? "I/O error" : f.getReason());
        }
        return e.getMessage() == null ? "I/O error" : e.getMessage();
    }

    private static String suffix(final String reason) {
        return reason == null ? "" : " (" + reason + ")";
    }

    private static void debug(final Exception ex, final PrintStream err) {
        if (System.getenv("FANSTORE_DEBUG") != null) {
            ex.printStackTrace(err);
        }
    }

    private static String name(final CommandLine commandLine) {
        return commandLine.getCommandSpec().qualifiedName();
    }
}
