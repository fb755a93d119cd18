package org.fanstore.runtime;

import org.fanstore.runtime.lifecycle.LauncherLink;
import org.fanstore.runtime.lifecycle.OrphanCleanup;
import org.fanstore.runtime.lifecycle.ProcessSignals;

/**
 * Entry point of one runtime rank (started by {@code fanstore run}, never by hand). Reports on stdout with
 * {@code FANSTORE-READY ...} / {@code FANSTORE-ERROR ...} lines and listens on stdin ({@link LauncherLink}): the
 * launcher asks for the orderly stop there, and if the launcher dies instead, this rank stops the user's
 * commands and removes its directories itself. At the orderly end it prints {@link RuntimeReport}'s lines
 * (outputs not saved, drain summary). SIGTERM and SIGINT are ignored: the launcher decides when the
 * runtime may go, after the command had its grace period to write a checkpoint.
 */
public final class RuntimeMain {
    private RuntimeMain() {
    }

    public static void main(String[] args) {
        ProcessSignals.ignoreTermination();
        LauncherLink link = LauncherLink.listen(System.in);
        NodeRuntime runtime = null;
        int status = 0;
        try {
            RuntimeConfig config = RuntimeConfig.parse(args);
            TraceFilter.install("fanstore rank " + config.rank() + ": ");
            link.whenOrphaned(() -> {
                OrphanCleanup.run(config.rank(), config.localDir(), config.shmDir(), link);
                halt(1);
            });
            runtime = NodeRuntime.start(config);
            runtime.failWith(e -> fail(FatalMessage.of(e)), RuntimeMain::lost);
            System.out.println("FANSTORE-READY " + runtime.readyFields());
            System.out.flush();
            link.awaitStop();
            runtime.finish();
            // after the last command of every node ended, however it ended: nothing commits any more
            for (String line : runtime.finishOutputs()) {
                System.out.println(line);
            }
            for (String line : runtime.statsLines()) {
                System.out.println("FANSTORE-STATS " + line);
            }
            System.out.flush();
            runtime = null;
        } catch (Throwable t) {
            System.out.println("FANSTORE-ERROR " + FatalMessage.of(t));
            System.out.flush();
            if (System.getenv("FANSTORE_DEBUG") != null) {
                t.printStackTrace();
            }
            status = 1;
        } finally {
            if (runtime != null) {
                runtime.close();
            }
        }
        halt(status);
    }

    /**
     * Ends this rank at once after the MPJ world failed while the job runs: the launcher sees the error line
     * and the exit, stops the commands and names the failed rank. Readers waiting on this runtime get EIO.
     */
    private static void fail(String message) {
        synchronized (RuntimeMain.class) {
            System.out.println("FANSTORE-ERROR " + message.replace('\n', ' '));
            System.out.flush();
            // Not exit(): a shutdown hook (MPJ's, a progress bar's) could wait on the peer that failed.
            Runtime.getRuntime().halt(1);
        }
    }

    /** A node was lost and this rank goes on without it: one line for the launcher (--on-node-loss continue). */
    private static void lost(String fields) {
        synchronized (RuntimeMain.class) {
            System.out.println("FANSTORE-LOST " + fields);
            System.out.flush();
        }
    }

    /** MPJ leaves non-daemon threads behind; only exit() ends the JVM. */
    private static void halt(int status) {
        System.exit(status);
    }
}
