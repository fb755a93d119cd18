package org.fanstore.launcher.rendezvous;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.prep.store.ObjectStore;
import org.fanstore.prep.store.StoreException;
import org.fanstore.runtime.membership.JobSecret;
import org.fanstore.runtime.world.BoundedWait;

/**
 * The rendezvous in the dataset's bucket, for nodes that share no file system (README.md, "Where node 0
 * publishes"): {@code PREFIX/NAME.fs.jobs/<job>/secret} and {@code .../endpoint}, beside the dataset. Reading the
 * secret needs the bucket's credentials: the same trust as reading the dataset.
 */
public final class BucketRendezvous implements RendezvousPlace {
    private final ObjectStore store;
    private final DatasetLocation dataset;

    public BucketRendezvous(ObjectStore store, DatasetLocation dataset) {
        if (!dataset.isObjectStore()) {
            throw new IllegalArgumentException(dataset + " is not in a bucket");
        }
        this.store = store;
        this.dataset = dataset;
    }

    private String key(String jobId, String name) {
        RendezvousFile.path(java.nio.file.Path.of("."), jobId); // checks the job id: one safe key segment
        return dataset.key() + ".jobs/" + jobId + "/" + name;
    }

    @Override
    public void publish(String jobId, JobSecret secret, RendezvousFile.Endpoint endpoint) throws IOException {
        byte[] s = new byte[JobSecret.BYTES];
        secret.copyInto(s, 0);
        store.put(dataset.bucket(), key(jobId, "secret"), s);
        store.put(dataset.bucket(), key(jobId, "endpoint"),
                (endpoint.host() + ":" + endpoint.port() + "\n").getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public RendezvousFile.Endpoint await(String jobId, Duration timeout) throws IOException, InterruptedException {
        String key = key(jobId, "endpoint");
        long deadline = BoundedWait.deadlineAfter(timeout);
        long pause = FIRST_POLL_NANOS;
        while (true) {
            try {
                String line = new String(store.get(dataset.bucket(), key), StandardCharsets.UTF_8).strip();
                int colon = line.lastIndexOf(':');
                try {
                    if (colon > 0) {
                        return new RendezvousFile.Endpoint(line.substring(0, colon),
                                Integer.parseInt(line.substring(colon + 1)));
                    }
                } catch (NumberFormatException e) {
                    // reported below
                }
                throw new IOException(where(jobId) + " holds '" + line + "', not HOST:PORT; delete it and restart"
                        + " the job");
            } catch (StoreException e) {
                if (e.reason() != StoreException.Reason.NO_KEY) {
                    throw e;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IOException("node 0 did not publish " + where(jobId) + " within " + timeout.toSeconds()
                            + " s");
                }
                LockSupport.parkNanos(Math.min(pause, left));
                if (Thread.interrupted()) {
                    throw new InterruptedException("waiting for " + where(jobId));
                }
                pause = Math.min(pause * 2, MAX_POLL_NANOS);
            }
        }
    }

    @Override
    public JobSecret readSecret(String jobId) throws IOException {
        byte[] s = store.get(dataset.bucket(), key(jobId, "secret"));
        if (s.length != JobSecret.BYTES) {
            throw new IOException("s3://" + dataset.bucket() + "/" + key(jobId, "secret") + " holds " + s.length
                    + " bytes, not a job secret; restart the job");
        }
        return JobSecret.of(s);
    }

    @Override
    public void remove(String jobId) throws IOException {
        store.delete(dataset.bucket(), key(jobId, "endpoint"));
        store.delete(dataset.bucket(), key(jobId, "secret"));
    }

    @Override
    public String where(String jobId) {
        return "s3://" + dataset.bucket() + "/" + key(jobId, "endpoint");
    }

    @Override
    public String mustSee() {
        return "the object store (" + store.endpoint() + ", bucket " + dataset.bucket() + ", the same credentials)";
    }
}
