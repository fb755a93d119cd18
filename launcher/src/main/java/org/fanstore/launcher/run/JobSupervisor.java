package org.fanstore.launcher.run;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.fanstore.runtime.lifecycle.LauncherLink;
import org.fanstore.runtime.lifecycle.ProcessSignals;

/**
 * Drives one node's (or, in single-machine mode, all N ranks') part of a job: runtimes up, ready line, the
 * user's command under the shim, then teardown. Every wait is bounded or ends when a process ends; a runtime
 * that dies at any point turns into a message naming its rank, the user's commands are killed, and the exit
 * status is non-zero. Teardown runs on every path (the caller also registers it as a shutdown hook for ^C).
 */
final class JobSupervisor {
    /** Exit status when a runtime rank failed (the user's command's own status wins when it failed first). */
    static final int EXIT_RANK_FAILED = 3;
    /** Exit status when the command succeeded but a committed output could not be saved to --output-dir. */
    static final int EXIT_OUTPUT_LOST = 4;

    private sealed interface Event permits RankDied, CommandExited, Terminate {}

    private record RankDied(RuntimeProcess rank) implements Event {}

    private record CommandExited(UserCommand command, int status) implements Event {}

    /** SIGTERM or SIGINT reached the launcher (a second one only sets {@link #hurry}). */
    private record Terminate(int signal) implements Event {}

    private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private final List<RuntimeProcess> runtimes = new ArrayList<>();
    private final List<UserCommand> commands = new ArrayList<>();
    private final PrintStream err;
    private volatile boolean tornDown;
    private volatile int terminatedBy;
    private volatile boolean hurry;
    /** --on-node-loss continue: a runtime that dies after ready takes only its own rank's commands with it. */
    private final boolean continueOnLoss;
    /** Ranks of this launcher whose runtime died after ready (continue mode), and when (epoch ms). */
    private final Map<Integer, Long> lostRanks = new java.util.concurrent.ConcurrentHashMap<>();

    JobSupervisor(PrintStream err) {
        this(err, false);
    }

    JobSupervisor(PrintStream err, boolean continueOnLoss) {
        this.err = err;
        this.continueOnLoss = continueOnLoss;
    }

    /** Starts one runtime per rank given, with the command line built for each rank. */
    synchronized void startRuntimes(int[] ranks, IntFunction<List<String>> commandLine, boolean keepLocal)
            throws IOException {
        for (int rank : ranks) {
            refuseAfterTeardown();
            RuntimeProcess rp = RuntimeProcess.start(rank, commandLine.apply(rank),
                    dead -> events.add(new RankDied(dead)));
            runtimes.add(rp);
            if (keepLocal) {
                rp.tell(LauncherLink.KEEP_LOCAL);
            }
        }
    }

    /**
     * SIGTERM or SIGINT reached the launcher (called from the signal's thread). The first one starts the
     * termination: the commands get SIGTERM and the grace period; a second one cuts the grace short.
     */
    void terminate(int signal) {
        synchronized (this) {
            if (terminatedBy != 0) {
                hurry = true;
                err.println("fanstore: second " + signalName(signal) + ": stopping the command now");
                return;
            }
            terminatedBy = signal;
        }
        events.add(new Terminate(signal));
    }

    /** The signal that terminated the job, or 0. */
    int terminatedBy() {
        return terminatedBy;
    }

    static String signalName(int signal) {
        return signal == ProcessSignals.SIGINT ? "SIGINT" : signal == ProcessSignals.SIGTERM ? "SIGTERM"
                : "signal " + signal;
    }

    /**
     * Waits until every runtime is ready. Returns their ready lines by rank, or null after printing which rank
     * failed (or which did not become ready in time).
     */
    Map<Integer, String> awaitReady(long timeoutMillis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        Map<Integer, String> lines = new HashMap<>();
        for (RuntimeProcess rp : runtimes) {
            while (true) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    err.println("fanstore: rank " + rp.rank() + " was not ready after " + timeoutMillis / 1000
                            + " s (raise --load-timeout for very large datasets)");
                    return null;
                }
                if (rp.awaitReady(Math.min(left, 200))) {
                    lines.put(rp.rank(), rp.readyLine());
                    break;
                }
                if (firstDeath() != null) {
                    reportDeaths();
                    return null;
                }
                if (terminatedBy != 0) {
                    err.println("fanstore: terminated by " + signalName(terminatedBy) + " while loading");
                    return null;
                }
            }
        }
        return lines;
    }

    /**
     * One rank's failure usually takes the others down with it (their collectives fail): give them a moment
     * to say so, then print every dead rank, first to die first, so the cause is the first line.
     */
    private void reportDeaths() throws InterruptedException {
        Thread.sleep(1_000);
        List<RuntimeProcess> dead = new ArrayList<>();
        for (Event e : events) {
            if (e instanceof RankDied d && !dead.contains(d.rank())) {
                dead.add(d.rank());
            }
        }
        for (RuntimeProcess rp : runtimes) {
            if (!rp.alive() && !dead.contains(rp)) {
                dead.add(rp);
            }
        }
        for (RuntimeProcess rp : dead) {
            err.println("fanstore: " + rp.failure());
        }
    }

    /** Whether a runtime has died, for waits outside this class that must end early then. */
    boolean runtimeDied() {
        return firstDeath() != null;
    }

    private RankDied firstDeath() {
        for (Event e : events) {
            if (e instanceof RankDied d) {
                return d;
            }
        }
        for (RuntimeProcess rp : runtimes) {
            if (!rp.alive()) {
                return new RankDied(rp);
            }
        }
        return null;
    }

    synchronized void startCommand(int rank, List<String> command, Map<String, String> env) throws IOException {
        refuseAfterTeardown();
        UserCommand uc = UserCommand.start(rank, command, env);
        commands.add(uc);
        for (RuntimeProcess rp : runtimes) {
            if (rp.rank() == rank) {
                rp.tell(LauncherLink.COMMAND + uc.process().pid());
            }
        }
        uc.process().onExit().thenAccept(p -> events.add(new CommandExited(uc, p.exitValue())));
    }

    /**
     * Waits for every user command to end, or for a runtime to die. Returns the job's exit status: the first
     * failing command's status (in the order they ended), else 0; EXIT_RANK_FAILED when a runtime died.
     */
    int awaitCommands(long graceMillis) throws InterruptedException {
        int remaining = commands.size();
        int status = 0;
        while (remaining > 0) {
            Event e = events.poll(1, TimeUnit.SECONDS);
            if (e instanceof Terminate t) {
                return terminateCommands(t.signal(), graceMillis);
            } else if (e instanceof CommandExited done) {
                remaining--;
                RuntimeProcess its = runtimeOf(done.command().rank());
                if (lostRanks.containsKey(done.command().rank()) || (continueOnLoss && done.status() != 0
                        && its != null && !its.alive() && goOnWithout(its))) {
                    continue;  // stopped with its lost runtime: not this job's status
                }
                if (done.status() != 0 && status == 0) {
                    status = done.status();
                    if (commands.size() > 1) {
                        err.println("fanstore: the command on rank " + done.command().rank() + " exited with status "
                                + done.status());
                    }
                }
            } else if (e instanceof RankDied dead) {
                if (continueOnLoss && goOnWithout(dead.rank())) {
                    continue;
                }
                err.println("fanstore: " + dead.rank().failure() + "; stopping the job");
                return status != 0 ? status : EXIT_RANK_FAILED;
            }
        }
        return status;
    }

    /**
     * --on-node-loss continue, a runtime of this launcher died after ready: if another runtime of this launcher is
     * still alive (single-machine mode), the dead one's commands are stopped and the others go on; false when this
     * launcher has no runtime left (its node is the lost one: it ends as in end mode).
     */
    private boolean goOnWithout(RuntimeProcess dead) {
        if (lostRanks.containsKey(dead.rank())) {
            return true;
        }
        if (runtimes.stream().noneMatch(rp -> rp != dead && rp.alive())) {
            return false;
        }
        lostRanks.put(dead.rank(), System.currentTimeMillis());
        for (UserCommand uc : commands) {
            if (uc.rank() == dead.rank() && uc.process().isAlive()) {
                uc.kill();
            }
        }
        err.println("fanstore: " + dead.failure() + "; rank " + dead.rank() + " is lost: its commands were stopped,"
                + " the other ranks go on (--on-node-loss continue)");
        return true;
    }

    private RuntimeProcess runtimeOf(int rank) {
        return runtimes.stream().filter(rp -> rp.rank() == rank).findFirst().orElse(null);
    }

    /** Ranks whose runtime this launcher saw die after ready, or that its runtimes reported lost; with when. */
    Map<Integer, Long> lostRanks() {
        Map<Integer, Long> all = new java.util.TreeMap<>(lostRanks);
        for (RuntimeProcess rp : runtimes) {
            String line = rp.lostLine();
            if (line == null) {
                continue;
            }
            Map<String, String> f = org.fanstore.runtime.stats.RankStats.fields(line);
            long at = Long.parseLong(f.getOrDefault("at_ms", "0"));
            for (String r : f.getOrDefault("ranks", "").split(",")) {
                if (!r.isEmpty()) {
                    all.merge(Integer.parseInt(r), at, Math::min);
                }
            }
        }
        return all;
    }

    /**
     * SIGTERM to every command's process group (what SLURM sends on scancel or at the time limit: the cue to
     * write a last checkpoint), then up to {@code graceMillis} for them to end, less if a second signal came;
     * SIGKILL for what is left. Returns 128 + the launcher's signal, the shell's convention for "terminated".
     */
    private int terminateCommands(int signal, long graceMillis) throws InterruptedException {
        String name = signalName(signal);
        long deadline = System.currentTimeMillis() + graceMillis;
        for (UserCommand uc : commands) {
            uc.signal(ProcessSignals.SIGTERM);
        }
        if (!commands.isEmpty()) {
            err.println("fanstore: " + name + ": sent SIGTERM to the command, which has " + graceMillis / 1000
                    + " s (--grace) to end" + (signal == ProcessSignals.SIGINT ? "; ^C again to stop it now" : ""));
        }
        while (!hurry && System.currentTimeMillis() < deadline
                && commands.stream().anyMatch(uc -> uc.signal(0))) {
            Thread.sleep(20);
        }
        for (UserCommand uc : commands) {
            if (uc.signal(0)) {
                err.println("fanstore: the command on rank " + uc.rank() + (hurry ? " was stopped"
                        : " did not end within the " + graceMillis / 1000 + " s grace period") + ": killed");
                uc.kill();
            }
        }
        err.println("fanstore: terminated by " + name);
        return 128 + signal;
    }

    /**
     * The orderly end after every command of this node is done: runtimes are asked to stop and wait, inside
     * themselves, until every node of the job is done (other nodes may still read from them). Ends when they
     * exit; a runtime that dies meanwhile is just gone. Then tearDown has nothing left to kill.
     */
    void finish(boolean otherNodes, long timeoutMillis) throws InterruptedException {
        long started = System.currentTimeMillis();
        boolean said = false;
        for (RuntimeProcess rp : runtimes) {
            rp.requestStop();
        }
        for (RuntimeProcess rp : runtimes) {
            while (rp.alive() && System.currentTimeMillis() - started < timeoutMillis) {
                if (otherNodes && !said && System.currentTimeMillis() - started > 3_000) {
                    err.println("fanstore: this node is done; waiting for the other nodes to finish reading");
                    said = true;
                }
                Thread.sleep(50);
            }
        }
    }

    /** After {@link #finish}: how many committed outputs the runtimes reported as not saved. */
    int outputsLost() {
        return runtimes.stream().mapToInt(RuntimeProcess::outputsLost).sum();
    }

    /** After {@link #finish}: each rank's drain summary, for FANSTORE_VERBOSE. */
    List<String> drainSummaries() {
        return runtimes.stream().filter(rp -> rp.drainedLine() != null)
                .map(rp -> "rank " + rp.rank() + ": drained " + rp.drainedLine()).toList();
    }

    /** The statistics lines of this node's runtimes, after {@link #finish} (rank 0's carries every rank). */
    List<String> statsLines() throws InterruptedException {
        List<String> lines = new ArrayList<>();
        for (RuntimeProcess rp : runtimes) {
            lines.addAll(rp.statsLines(2_000));
        }
        return lines;
    }

    /**
     * A process started after teardown began (e.g. ^C between "ready" and the commands' start) would outlive the
     * launcher: starting and tearing down are serialised on this object, and nothing starts afterwards.
     */
    private void refuseAfterTeardown() throws IOException {
        if (tornDown) {
            throw new IOException("the job is stopping");
        }
    }

    /** Kills commands, stops runtimes (orderly first), and never throws. Idempotent. */
    void tearDown(long graceMillis) {
        synchronized (this) {
            if (tornDown) {
                return;
            }
            tornDown = true;
        }
        for (UserCommand uc : commands) {
            if (uc.process().isAlive()) {
                uc.kill();
            }
        }
        // Ask all at once, then wait: the grace period is shared, not per rank.
        for (RuntimeProcess rp : runtimes) {
            Thread t = new Thread(() -> rp.stop(graceMillis), "stop-rank-" + rp.rank());
            t.start();
        }
        long deadline = System.currentTimeMillis() + graceMillis + 6_000;
        for (RuntimeProcess rp : runtimes) {
            while (rp.alive() && System.currentTimeMillis() < deadline) {
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            if (rp.alive()) {
                rp.kill();
            }
        }
    }
}
