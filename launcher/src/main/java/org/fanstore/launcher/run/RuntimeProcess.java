package org.fanstore.launcher.run;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One runtime rank as a child JVM, and the launcher's view of it. The runtime speaks on its stdout in lines:
 * {@code FANSTORE-READY key=value...} once serving, {@code FANSTORE-ERROR message} before failing,
 * {@code FANSTORE-STATS rank=R key=value...} at the orderly end (rank 0 relays every rank's); any other
 * line is passed through prefixed with the rank. Closing its stdin asks it to shut down (so a launcher that
 * dies, even by SIGKILL, takes its runtimes with it).
 */
final class RuntimeProcess {
    static final String READY = "FANSTORE-READY ";
    static final String ERROR = "FANSTORE-ERROR ";
    static final String STATS = "FANSTORE-STATS ";

    private final int rank;
    private final Process process;
    private final CountDownLatch ready = new CountDownLatch(1);
    private final CountDownLatch outputEnded = new CountDownLatch(1);
    private final List<String> statsLines = new CopyOnWriteArrayList<>();
    private volatile String readyLine;
    private volatile String errorMessage;
    private volatile boolean stopping;

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

    /** Asks for an orderly shutdown (closes its stdin) without waiting. */
    void requestStop() {
        stopping = true;
        try {
            process.getOutputStream().close();
        } catch (IOException e) {
            process.destroyForcibly();
        }
    }

    /** Asks for an orderly shutdown, then kills it if it has not gone within the grace period. */
    void stop(long graceMillis) {
        stopping = true;
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
