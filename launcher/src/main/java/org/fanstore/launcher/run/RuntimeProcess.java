package org.fanstore.launcher.run;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.fanstore.runtime.RuntimeReport;
import org.fanstore.runtime.lifecycle.LauncherLink;

/**
 * One runtime rank as a child JVM, and the launcher's view of it. The runtime speaks on its stdout in lines:
 * {@code FANSTORE-READY key=value...} once serving, {@code FANSTORE-ERROR message} before failing,
 * {@code FANSTORE-STATS rank=R key=value...} at the orderly end (rank 0 relays every rank's); any other
 * line is passed through prefixed with the rank. Its stdin carries the launcher's side of
 * {@link LauncherLink}: the user's commands' process groups, then {@code stop} and end of file for the orderly
 * end. End of file alone (the launcher died, even by SIGKILL) makes the runtime stop those commands and remove
 * its directories before it exits.
 */
final class RuntimeProcess {
    static final String READY = "FANSTORE-READY ";
    static final String ERROR = "FANSTORE-ERROR ";
    static final String STATS = "FANSTORE-STATS ";
    /** A node was lost after ready and this rank went on without it: {@code ranks=R[,R] at_ms=T why=...}. */
    static final String LOST = "FANSTORE-LOST ";

    private final int rank;
    private final Process process;
    private final CountDownLatch ready = new CountDownLatch(1);
    private final CountDownLatch outputEnded = new CountDownLatch(1);
    private final List<String> statsLines = new CopyOnWriteArrayList<>();
    private volatile String readyLine;
    private volatile String errorMessage;
    private volatile String drainedLine;
    private volatile String lostLine;
    private volatile boolean stopping;
    private final AtomicInteger outputsLost = new AtomicInteger();

    private RuntimeProcess(int rank, Process process) {
        this.rank = rank;
        this.process = process;
    }

    static RuntimeProcess start(int rank, List<String> command, Consumer<RuntimeProcess> onUnexpectedExit)
            throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().remove("LD_PRELOAD"); // the runtime never runs under the shim
        RuntimeProcess rp = new RuntimeProcess(rank, pb.start());
        Thread reader = new Thread(rp::pumpStdout, "rank-" + rank + "-stdout");
        reader.setDaemon(true);
        reader.start();
        rp.process.onExit().thenRun(() -> {
            rp.ready.countDown();
            if (!rp.stopping) {
                onUnexpectedExit.accept(rp);
            }
        });
        return rp;
    }

    private void pumpStdout() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith(READY)) {
                    readyLine = line.substring(READY.length());
                    ready.countDown();
                } else if (line.startsWith(ERROR)) {
                    errorMessage = line.substring(ERROR.length());
                } else if (line.startsWith(RuntimeReport.OUTPUT_FAILED)) {
                    outputsLost.incrementAndGet();
                    String[] keyWhy = line.substring(RuntimeReport.OUTPUT_FAILED.length()).split("\t", 2);
                    System.err.println("fanstore: rank " + rank + ": output " + keyWhy[0] + " was NOT saved: "
                            + (keyWhy.length > 1 ? keyWhy[1] : "unknown reason"));
                } else if (line.startsWith(RuntimeReport.OUTPUT_DRAINED)) {
                    drainedLine = line.substring(RuntimeReport.OUTPUT_DRAINED.length());
                } else if (line.startsWith(LOST)) {
                    lostLine = line.substring(LOST.length());  // the runtime said it on stderr already
                } else if (line.startsWith(STATS)) {
                    statsLines.add(line.substring(STATS.length()));
                } else {
                    System.err.println("[rank " + rank + "] " + line);
                }
            }
        } catch (IOException ignored) {
            // The process is gone; onExit reports it.
        } finally {
            outputEnded.countDown();
        }
    }

    /** The statistics lines it printed; waits (bounded) for its stdout to be read to the end first. */
    List<String> statsLines(long timeoutMillis) throws InterruptedException {
        outputEnded.await(timeoutMillis, TimeUnit.MILLISECONDS);
        return List.copyOf(statsLines);
    }

    int rank() {
        return rank;
    }

    /** Waits until ready or dead; true when ready. */
    boolean awaitReady(long timeoutMillis) throws InterruptedException {
        return ready.await(timeoutMillis, TimeUnit.MILLISECONDS) && readyLine != null;
    }

    String readyLine() {
        return readyLine;
    }

    /** Committed outputs this rank reported as not on the output directory. */
    int outputsLost() {
        return outputsLost.get();
    }

    /** The drain's summary ({@code files=N bytes=B ms=M}), or null. */
    String drainedLine() {
        return drainedLine;
    }

    /** The runtime's {@code FANSTORE-LOST} fields once it went on without a lost node, else null. */
    String lostLine() {
        return lostLine;
    }

    boolean alive() {
        return process.isAlive();
    }

    /** Why this rank failed, for a message that names it. */
    String failure() {
        String cause = errorMessage != null ? errorMessage : "exited";
        if (process.isAlive()) {
            return "rank " + rank + ": " + cause;
        }
        int code = process.exitValue();
        String how = code > 128 ? "killed by signal " + (code - 128) : "exit code " + code;
        return "rank " + rank + " (pid " + process.pid() + ", " + how + "): " + cause;
    }

    /** One {@link LauncherLink} line; false if the runtime is gone. */
    synchronized boolean tell(String line) {
        try {
            OutputStream in = process.getOutputStream();
            in.write((line + "\n").getBytes(StandardCharsets.US_ASCII));
            in.flush();
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Asks for an orderly shutdown ({@code stop}, then end of file) without waiting. */
    void requestStop() {
        stopping = true;
        tell(LauncherLink.STOP);
        try {
            process.getOutputStream().close();
        } catch (IOException e) {
            process.destroyForcibly();
        }
    }

    /** Asks for an orderly shutdown, then kills it if it has not gone within the grace period. */
    void stop(long graceMillis) {
        stopping = true;
        tell(LauncherLink.STOP);
        try {
            process.getOutputStream().close();
            if (!process.waitFor(graceMillis, TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (IOException | InterruptedException e) {
            process.destroyForcibly();
        }
    }

    void kill() {
        stopping = true;
        process.destroyForcibly();
    }
}
