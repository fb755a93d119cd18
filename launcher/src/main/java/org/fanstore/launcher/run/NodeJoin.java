package org.fanstore.launcher.run;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Optional;
import java.util.StringJoiner;
import org.fanstore.runtime.liveness.RankFailedException;
import org.fanstore.launcher.rendezvous.RendezvousFile;
import org.fanstore.launcher.rendezvous.RendezvousPlace;
import org.fanstore.prep.store.StoreException;
import org.fanstore.launcher.rendezvous.RendezvousServer;

/**
 * The first moments of a multi-node job: every node's runtime must join node 0's rendezvous. A node that never
 * comes (a batch script that ran {@code fanstore run} without srun, a rendezvous directory one node cannot see)
 * is reported after the join timeout, a minute, not after the load timeout, half an hour, and in words that
 * say what to change. Loading the data, which may take long, only starts once every node has joined.
 */
final class NodeJoin {
    private static final long POLL_MILLIS = 100;

    private NodeJoin() {
    }

    /** On a node other than 0: node 0's address, or empty after saying why this node cannot join. */
    static Optional<RendezvousFile.Endpoint> awaitNodeZero(RendezvousPlace place, JobEnvironment job,
                                                           Duration timeout, PrintStream err)
            throws InterruptedException {
        try {
            return Optional.of(place.await(job.jobId(), timeout));
        } catch (StoreException e) {
            err.println("fanstore run: node " + job.nodeId() + " of " + job.nodeCount() + " cannot join: " + e
                    .getMessage());
            return Optional.empty();
        } catch (IOException e) {
            err.println("fanstore run: node " + job.nodeId() + " of " + job.nodeCount() + " cannot join: node 0 did"
                    + " not publish its address as " + place.where(job.jobId()) + " within "
                    + timeout.toSeconds() + " s. Every node must see " + place.mustSee()
                    + ", and node 0 must run too: start fanstore run with srun, one task per node");
            return Optional.empty();
        }
    }

    /**
     * On node 0, after its runtime started: waits until every node joined the rendezvous (or a runtime of this
     * node died, which the caller reports). False after stopping this node's runtimes and printing how many
     * nodes joined and what to check. The server's own deadline must be later than {@code timeout}: the
     * runtimes are stopped here first, so no MPJ stack trace reaches the user when the server gives up.
     */
    static boolean awaitAllNodes(RendezvousServer server, JobSupervisor supervisor, JobEnvironment job,
                                 RendezvousPlace place, Duration timeout, PrintStream err) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!server.finished()) {
            if (supervisor.runtimeDied()) {
                return true;
            }
            if (System.nanoTime() - deadline > 0) {
                int[] missing = server.missingRanks();
                supervisor.tearDown(0);
                server.close();
                err.println(missingMessage(job, missing, timeout, place));
                return false;
            }
            Thread.sleep(POLL_MILLIS);
        }
        try {
            server.awaitCompletion();
            return true;
        } catch (RankFailedException e) {
            err.println(missingMessage(job, e.ranks(), timeout, place));
            return false;
        } catch (IOException e) {
            err.println("fanstore run: the nodes could not join: " + e.getMessage());
            return false;
        }
    }

    private static String missingMessage(JobEnvironment job, int[] missing, Duration timeout, RendezvousPlace place) {
        StringJoiner names = new StringJoiner(", ");
        for (int node : missing) {
            names.add(Integer.toString(node));
        }
        return "fanstore run: only " + (job.nodeCount() - missing.length) + " of " + job.nodeCount()
                + " nodes joined within " + timeout.toSeconds() + " s (missing: node " + names + ")."
                + " Every node must run fanstore run in the same job step: under SLURM start it with srun (one task"
                + " per node), not from the batch script alone; and every node must see " + place.mustSee();
    }
}
