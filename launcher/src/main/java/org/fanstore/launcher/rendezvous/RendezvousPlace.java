package org.fanstore.launcher.rendezvous;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.fanstore.runtime.membership.JobSecret;

/**
 * Where node 0 publishes its rendezvous endpoint and the job secret for the other nodes (README.md, "Where node 0
 * publishes"): a directory every node sees ({@link RendezvousFile}) or the dataset's bucket
 * ({@link BucketRendezvous}).
 */
public interface RendezvousPlace {
    /** Publishes the secret, then the endpoint (so a node that sees the endpoint finds the secret). */
    void publish(String jobId, JobSecret secret, RendezvousFile.Endpoint endpoint) throws IOException;

    /** Polls for the endpoint of {@code jobId} until {@code timeout}; an IOException names the wait. */
    RendezvousFile.Endpoint await(String jobId, Duration timeout) throws IOException, InterruptedException;

    /** The secret node 0 published; after {@link #await} returned. */
    JobSecret readSecret(String jobId) throws IOException;

    /** Removes what {@link #publish} made (a rerun with the same id cannot read a stale endpoint). */
    void remove(String jobId) throws IOException;

    /** As messages name where the endpoint of {@code jobId} is published. */
    String where(String jobId);

    /** What every node must be able to reach, and the option that chooses it, for messages. */
    String mustSee();

    /** A directory shared by all nodes. */
    static RendezvousPlace directory(Path dir) {
        return new RendezvousPlace() {
            @Override
            public void publish(String jobId, JobSecret secret, RendezvousFile.Endpoint endpoint)
                    throws IOException {
                Files.createDirectories(dir);
                RendezvousFile.publishSecret(dir, jobId, secret);
                RendezvousFile.publish(dir, jobId, endpoint.host(), endpoint.port());
            }

            @Override
            public RendezvousFile.Endpoint await(String jobId, Duration timeout)
                    throws IOException, InterruptedException {
                return RendezvousFile.await(dir, jobId, timeout);
            }

            @Override
            public JobSecret readSecret(String jobId) throws IOException {
                return RendezvousFile.readSecret(dir, jobId);
            }

            @Override
            public void remove(String jobId) throws IOException {
                RendezvousFile.remove(dir, jobId);
            }

            @Override
            public String where(String jobId) {
                return RendezvousFile.path(dir.toAbsolutePath(), jobId).toString();
            }

            @Override
            public String mustSee() {
                return dir.toAbsolutePath() + " (a shared file system; see --rendezvous-dir)";
            }
        };
    }
}
