package org.fanstore.runtime.mpi;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;

/**
 * Tells which ranks are dead after MPJ failed, so errors can name them. niodev closes every channel of a
 * survivor when any one peer goes away, after which every send fails and every receive starves alike:
 * MPJ itself no longer knows who died. So each rank also listens on a plain TCP port that only accepts
 * and closes; a probe that is refused (the kernel's reset: nothing holds the port) means that rank's process is
 * gone. A probe that times out proves nothing: a flood of connections fills the accept queue and the kernel
 * then drops the probe's SYN, and an overloaded machine answers late (README.md). The port is bound to the
 * address it is advertised by (loopback when the job is on one machine), not to every interface.
 *
 * <p>A rank advertises the local address it would use to reach the rendezvous host (found by connecting
 * a UDP socket, which sends nothing): the address its peers reach it by.
 */
final class PeerLiveness implements AutoCloseable {
    private static final int PROBE_TIMEOUT_MILLIS = 1_000;

    private final ServerSocket listener;
    private final String advertisedHost;
    private volatile InetSocketAddress[] peers;

    PeerLiveness(String rendezvousHost, int rendezvousPort) throws IOException {
        InetAddress local;
        try (DatagramSocket probe = new DatagramSocket()) {
            probe.connect(new InetSocketAddress(rendezvousHost, rendezvousPort));
            local = probe.getLocalAddress();
        }
        if (local == null || local.isAnyLocalAddress()) {
            local = InetAddress.getLoopbackAddress();
        }
        this.advertisedHost = local.getHostAddress();
        this.listener = new ServerSocket();
        this.listener.bind(new InetSocketAddress(local, 0), 50);
        Thread acceptor = new Thread(this::acceptAndClose, "fanstore-liveness");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** This rank's endpoint, to be all-gathered: {@code host:port} in UTF-8. */
    byte[] endpoint() {
        return (advertisedHost + ":" + listener.getLocalPort()).getBytes(StandardCharsets.UTF_8);
    }

    /** Installs every rank's endpoint, as gathered. */
    void setPeers(byte[][] endpoints) {
        InetSocketAddress[] parsed = new InetSocketAddress[endpoints.length];
        for (int r = 0; r < endpoints.length; r++) {
            String text = new String(endpoints[r], StandardCharsets.UTF_8);
            int colon = text.lastIndexOf(':');
            parsed[r] = new InetSocketAddress(text.substring(0, colon), Integer.parseInt(text.substring(colon + 1)));
        }
        this.peers = parsed;
    }

    /**
     * Probes {@code candidates} in parallel (at most about one second) and returns those whose port refused the
     * connection; empty if the endpoints are not known yet or no candidate is known dead.
     */
    int[] deadAmong(int[] candidates) {
        InetSocketAddress[] known = peers;
        if (known == null || candidates.length == 0) {
            return new int[0];
        }
        List<CompletableFuture<Boolean>> alive = Arrays.stream(candidates)
                .mapToObj(r -> CompletableFuture.supplyAsync(() -> answers(known[r]), PeerLiveness::runOnDaemon))
                .toList();
        return IntStream.range(0, candidates.length).filter(i -> !alive.get(i).join()).map(i -> candidates[i])
                .sorted().toArray();
    }

    /** Every rank but {@code self}. */
    static int[] othersThan(int self, int size) {
        return IntStream.range(0, size).filter(r -> r != self).toArray();
    }

    @Override
    public void close() {
        try {
            listener.close();
        } catch (IOException ignored) {
            // the acceptor thread is a daemon and ends with the process anyway
        }
    }

    /** False only when the connection is refused; a timeout or an unreachable network is not proof of death. */
    private static boolean answers(InetSocketAddress target) {
        try (Socket s = new Socket()) {
            s.connect(target, PROBE_TIMEOUT_MILLIS);
            return true;
        } catch (java.net.ConnectException refused) {
            return false; // ECONNREFUSED: no process holds the port
        } catch (IOException slowOrUnknown) {
            return true; // SocketTimeoutException: a flood or an overloaded machine, not a dead process
        }
    }

    private static void runOnDaemon(Runnable task) {
        Thread t = new Thread(task, "fanstore-liveness-probe");
        t.setDaemon(true);
        t.start();
    }

    private void acceptAndClose() {
        while (!listener.isClosed()) {
            try {
                listener.accept().close();
            } catch (IOException e) {
                // closed listener ends the loop; a failed accept of one probe does not matter
            }
        }
    }

    @Override
    public String toString() {
        return "PeerLiveness" + Arrays.toString(peers);
    }
}
