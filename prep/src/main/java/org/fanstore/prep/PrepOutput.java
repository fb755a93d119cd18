package org.fanstore.prep;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.fanstore.prep.format.Manifest;

/**
 * Where prep writes, and what it may delete. What must hold:
 * <ul>
 * <li>{@code --force} replaces only a fanstore dataset: a real directory (not a symlink) holding a manifest that
 * parses and nothing but regular files. Anything else at {@code --output} is refused by name and left alone.</li>
 * <li>The partitions are written into {@code OUT.fs.tmp-PID}, which nothing outlives: a failure or SIGINT/SIGTERM
 * (a shutdown hook) removes it, and a prep killed with SIGKILL leaves one that the next prep of the same output
 * removes (its PID is no longer alive).</li>
 * <li>The old dataset is renamed aside ({@code OUT.fs.tmp-PID.old}) before the new one takes its name and is
 * deleted after, so an interruption in between leaves a name the next prep cleans, never a half-deleted tree.</li>
 * </ul>
 */
final class PrepOutput implements AutoCloseable {
    private static final Pattern TEMP = Pattern.compile("\\.tmp-([0-9]{1,10})(\\.old)?");

    private final Path output;
    private final boolean force;
    private final Path temp;
    private final Path aside;
    private final Thread hook;
    /** Guarded by {@code this}: once true the temporary directory is the dataset and must not be deleted. */
    private boolean committed;

    private PrepOutput(final Path output, final boolean force, final Path temp, final Path aside) {
        this.output = output;
        this.force = force;
        this.temp = temp;
        this.aside = aside;
        this.hook = new Thread(this::abandon, "fanstore-prep-cleanup");
    }

    /**
     * Refuses {@code --output} when something other than a fanstore dataset is there and {@code force} is set
     * (without it, the caller refuses anything that exists).
     */
    static void checkReplaceable(final Path output) throws PrepException {
        final String why = notADataset(output);
        if (why != null) {
            throw new PrepException("--output " + output + " " + why + ": --force replaces only a dataset " +
                "fanstore prep wrote; nothing was deleted: move it away or choose another --output");
        }
    }

    private static String notADataset(final Path output) {
        if (!Files.exists(output, LinkOption.NOFOLLOW_LINKS)) {
            return null;
        }
        if (Files.isSymbolicLink(output)) {
            return "is a symlink";
        }
        if (!Files.isDirectory(output, LinkOption.NOFOLLOW_LINKS)) {
            return "is a file, not a fanstore dataset";
        }
        try {
            Manifest.read(output);
        } catch (final IOException | RuntimeException e) {
            return "is a directory without a readable " + Manifest.FILE_NAME + ", not a fanstore dataset";
        }
        try (var children = Files.newDirectoryStream(output)) {
            for (final Path child : children) {
                if (!Files.isRegularFile(child, LinkOption.NOFOLLOW_LINKS)) {
                    return "holds " + child.getFileName() + ", which fanstore prep never writes (not a regular " +
                        "file)";
                }
            }
        } catch (final IOException e) {
            return "cannot be listed (" + e.getMessage() + ")";
        }
        return null;
    }

    /**
     * Removes what earlier preps of {@code output} killed with SIGKILL left ({@code OUT.fs.tmp-PID} and
     * {@code OUT.fs.tmp-PID.old} of a PID no longer alive), then creates this prep's temporary directory.
     */
    static PrepOutput create(final Path output, final boolean force, final Consumer<String> warnings)
        throws PrepException, IOException {
        final String name = output.getFileName().toString();
        for (final Path stale : leftovers(output)) {
            DatasetPacker.deleteRecursively(stale);
            warnings.accept("removed " + stale + ", left by an interrupted prep of " + name);
        }
        final long pid = ProcessHandle.current().pid();
        final PrepOutput out = new PrepOutput(output, force, output.resolveSibling(name + ".tmp-" + pid),
            output.resolveSibling(name + ".tmp-" + pid + ".old"));
        try {
            Files.createDirectory(out.temp);
        } catch (final FileSystemException e) {
            throw new PrepException("cannot create " + out.temp + " (" + DatasetPacker.reason(e) + "): choose an " +
                "--output in a writable directory");
        }
        Runtime.getRuntime().addShutdownHook(out.hook);
        return out;
    }

    private static List<Path> leftovers(final Path output) throws IOException {
        final String prefix = output.getFileName().toString();
        final List<Path> found = new ArrayList<>();
        try (var siblings = Files.newDirectoryStream(output.getParent())) {
            for (final Path p : siblings) {
                final String name = p.getFileName().toString();
                if (!name.startsWith(prefix)) {
                    continue;
                }
                final Matcher m = TEMP.matcher(name.substring(prefix.length()));
                if (m.matches() && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) &&
                    gone(Long.parseLong(m.group(1)))) {
                    found.add(p);
                }
            }
        }
        return found;
    }

    /** The prep that wrote {@code OUT.fs.tmp-PID} is gone (this process has not made its own yet). */
    private static boolean gone(final long pid) {
        return pid == ProcessHandle.current().pid() || ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true);
    }

    Path temp() {
        return temp;
    }

    /**
     * Makes the finished temporary directory the dataset. Whatever is at {@code --output} now is checked again
     * (something may have appeared there while prep ran): only with {@code --force}, only a dataset, is replaced.
     */
    synchronized void commit() throws PrepException, IOException {
        final boolean replacing = Files.exists(output, LinkOption.NOFOLLOW_LINKS);
        if (replacing && !force) {
            throw new PrepException("--output " + output + " appeared while prep ran: nothing was replaced; " +
                "pass --force to replace a dataset or choose another --output");
        }
        if (replacing) {
            checkReplaceable(output);
            Files.move(output, aside, StandardCopyOption.ATOMIC_MOVE);
        }
        try {
            Files.move(temp, output, StandardCopyOption.ATOMIC_MOVE);
        } catch (final IOException e) {
            if (replacing) {
                Files.move(aside, output, StandardCopyOption.ATOMIC_MOVE);   // the old dataset back in place
            }
            throw e;
        }
        committed = true;
        if (replacing) {
            DatasetPacker.deleteRecursively(aside);
        }
    }

    /** Removes the temporary directory unless it became the dataset; runs as a shutdown hook too. */
    private synchronized void abandon() {
        if (committed) {
            return;
        }
        // Writer threads may still be creating files while the JVM shuts down: delete until nothing is left.
        for (int attempt = 0; attempt < 50 && Files.exists(temp, LinkOption.NOFOLLOW_LINKS); attempt++) {
            try {
                DatasetPacker.deleteRecursively(temp);
            } catch (final IOException e) {
                Thread.onSpinWait();
            }
        }
    }

    @Override
    public void close() {
        abandon();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (final IllegalStateException shuttingDown) {
            // the hook runs (or ran) abandon, which is idempotent
        }
    }
}
