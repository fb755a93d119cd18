package org.fanstore.runtime.lifecycle;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

/**
 * What the launcher tells a runtime on its stdin, one line each (the launcher writes, the runtime reads):
 * <pre>
 *   command PGID     the process group of a user's command served by this rank (one line per command)
 *   keep-local       --keep-local was given: delete nothing
 *   stop             an orderly stop follows; then the launcher closes stdin
 * </pre>
 * End of file after {@code stop} is the orderly end of the job. End of file without it means the launcher died
 * (the kernel closed its end of the pipe, e.g. after SIGKILL): nobody else is left to stop the commands or to
 * delete the rank's directories, so the runtime does both ({@link OrphanCleanup}).
 */
public final class LauncherLink {
    public static final String COMMAND = "command ";
    public static final String KEEP_LOCAL = "keep-local";
    public static final String STOP = "stop";

    private final List<Long> commandGroups = new CopyOnWriteArrayList<>();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean keepLocal;
    private boolean stopAsked;
    private boolean orphaned;
    private Runnable onOrphaned;

    private LauncherLink() {
    }

    /** Starts reading {@code in} on a daemon thread. */
    public static LauncherLink listen(InputStream in) {
        LauncherLink link = new LauncherLink();
        Thread t = new Thread(() -> link.read(in), "fanstore-launcher-link");
        t.setDaemon(true);
        t.start();
        return link;
    }

    /** Runs {@code action} (on the reading thread) if the launcher dies, at once if it already has. */
    public void whenOrphaned(Runnable action) {
        boolean now;
        synchronized (this) {
            onOrphaned = action;
            now = orphaned;
        }
        if (now) {
            action.run();
        }
    }

    /** Returns once the launcher asked for the orderly stop and closed stdin. */
    public void awaitStop() throws InterruptedException {
        stopped.await();
    }

    public List<Long> commandGroups() {
        return List.copyOf(commandGroups);
    }

    public boolean keepLocal() {
        return keepLocal;
    }

    private void read(InputStream in) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.startsWith(COMMAND)) {
                    commandGroups.add(Long.parseLong(line.substring(COMMAND.length()).trim()));
                } else if (line.equals(KEEP_LOCAL)) {
                    keepLocal = true;
                } else if (line.equals(STOP)) {
                    synchronized (this) {
                        stopAsked = true;
                    }
                }
            }
        } catch (IOException | NumberFormatException e) {
            // A broken pipe is the same as end of file: whether it was orderly depends on "stop" alone.
        }
        Runnable action;
        synchronized (this) {
            if (stopAsked) {
                stopped.countDown();
                return;
            }
            orphaned = true;
            action = onOrphaned;
        }
        if (action != null) {
            action.run();
        }
    }
}
