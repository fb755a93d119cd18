package org.fanstore.launcher.rendezvous;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Pattern;
import org.fanstore.runtime.membership.JobSecret;
import org.fanstore.runtime.world.BoundedWait;

/**
 * How ranks under a scheduler learn where rank 0's {@link RendezvousServer} listens: rank 0 writes
 * {@code <dir>/fanstore-rendezvous-<jobid>} (one line {@code HOST:PORT}) on a directory every node sees,
 * and the other ranks poll for it. The file is written to a temporary name and renamed, so a reader never
 * sees half a line; the job id in the name keeps concurrent jobs apart.
 *
 * <p>Beside it, rank 0 publishes the job's {@link JobSecret} as {@code fanstore-secret-<jobid>} (mode 0600 from
 * its creation, written before the endpoint, so a rank that sees the endpoint finds the secret), and removes
 * both once every rank has joined. The directory is the user's own (default {@code ~/.fanstore/rendezvous});
 * a secret file that is not the user's, or that others could read, is refused.
 */
public final class RendezvousFile {
    private static final Pattern JOB_ID = Pattern.compile("[A-Za-z0-9._-]{1,128}");
    /** Where the rendezvous server of a job listens. */
    public record Endpoint(String host, int port) {
    }

    private RendezvousFile() {
    }

    public static Path path(Path dir, String jobId) {
        if (!JOB_ID.matcher(jobId).matches()) {
            throw new IllegalArgumentException("job id '" + jobId + "' must match " + JOB_ID.pattern());
        }
        return dir.resolve("fanstore-rendezvous-" + jobId);
    }

    public static Path secretPath(Path dir, String jobId) {
        path(dir, jobId); // checks the job id
        return dir.resolve("fanstore-secret-" + jobId);
    }

    /** Publishes the job's secret for the other nodes; call before {@link #publish}. */
    public static Path publishSecret(Path dir, String jobId, JobSecret secret) throws IOException {
        return secret.writePrivate(secretPath(dir, jobId));
    }

    /** The secret rank 0 published; call after {@link #await} returned. */
    public static JobSecret readSecret(Path dir, String jobId) throws IOException {
        return JobSecret.read(secretPath(dir, jobId));
    }

    /** Publishes {@code host:port} for {@code jobId}; {@code host} should be an IP literal (see RendezvousServer). */
    public static Path publish(Path dir, String jobId, String host, int port) throws IOException {
        Path target = path(dir, jobId);
        Path temp = Files.createTempFile(dir, ".fanstore-rendezvous-" + jobId + "-", ".tmp");
        try {
            Files.writeString(temp, host + ":" + port + "\n", StandardCharsets.UTF_8);
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(temp);
        }
        return target;
    }

    /**
     * Polls for the file of {@code jobId} until {@code timeout} passes.
     *
     * @throws IOException naming the file and the wait if rank 0 never published it
     */
    public static Endpoint await(Path dir, String jobId, Duration timeout) throws IOException, InterruptedException {
        Path file = path(dir, jobId);
        long deadline = BoundedWait.deadlineAfter(timeout);
        long pause = FIRST_POLL_NANOS;
        while (true) {
            try {
                return parse(file, Files.readString(file, StandardCharsets.UTF_8));
            } catch (NoSuchFileException notYet) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IOException("rank 0 did not publish " + file + " within " + timeout.toSeconds()
                            + " s; check that rank 0 started and that " + dir + " is shared by all nodes");
                }
                LockSupport.parkNanos(Math.min(pause, left));
                if (Thread.interrupted()) {
                    throw new InterruptedException("waiting for " + file);
                }
                pause = Math.min(pause * 2, MAX_POLL_NANOS);
            }
        }
    }

    /** Removes the files at job end so a rerun with the same id cannot read a stale endpoint. */
    public static void remove(Path dir, String jobId) throws IOException {
        Files.deleteIfExists(path(dir, jobId));
        Files.deleteIfExists(secretPath(dir, jobId));
    }

    private static Endpoint parse(Path file, String text) throws IOException {
        String line = text.strip();
        int colon = line.lastIndexOf(':');
        try {
            if (colon > 0) {
                return new Endpoint(line.substring(0, colon), Integer.parseInt(line.substring(colon + 1)));
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IOException(file + " holds '" + line + "', not HOST:PORT; delete it and restart the job");
    }
}
