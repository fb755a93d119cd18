package org.fanstore.runtime.liveness;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;

/**
 * Tells which ranks are dead after MPJ failed, so errors can name them. niodev closes every channel of a
 * survivor when any one peer goes away, after which every send fails and every receive starves alike:
 * MPJ itself no longer knows who died. So each rank also listens on a plain TCP port that only accepts
 * and closes; a probe that is refused (the kernel's reset: nothing holds the port) means that rank's process is
 * gone; a probe with no route to the rank (the network to it went away: a cut link, its node down) means it
 * is lost too. A probe that times out proves nothing: a flood of connections fills the accept queue and the kernel
 * then drops the probe's SYN, and an overloaded machine answers late (README.md). The port is bound to the
 * address it is advertised by (loopback when the job is on one machine), not to every interface.
 *
 * <p>A rank advertises the local address it would use to reach the rendezvous host (found by connecting
 * a UDP socket, which sends nothing): the address its peers reach it by.
 */
public final class PeerLiveness implements AutoCloseable {
    private final ServerSocket listener;
    private final String advertisedHost;
    private volatile InetSocketAddress[] peers;

    public PeerLiveness(String rendezvousHost, int rendezvousPort) throws IOException {
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
    public byte[] endpoint() {
        return (advertisedHost + ":" + listener.getLocalPort()).getBytes(StandardCharsets.UTF_8);
    }

    /** Installs every rank's endpoint, as gathered. */
    public void setPeers(byte[][] endpoints) {
        InetSocketAddress[] parsed = new InetSocketAddress[endpoints.length];
        for (int r = 0; r < endpoints.length; r++) {
            String text = new String(endpoints[r], StandardCharsets.UTF_8);
            int colon = text.lastIndexOf(':');
            parsed[r] = new InetSocketAddress(text.substring(0, colon), Integer.parseInt(text.substring(colon + 1)));
        }
        this.peers = parsed;
    }

    /** What one probe proves. */
    public enum Verdict {
        /** The port accepted: the process lives. */
        ANSWERS,
        /** Refused (the kernel's reset): no process holds the port, the rank's process is gone. */
        REFUSED,
        /** No route to it (ENETUNREACH, EHOSTUNREACH): the network to that rank is gone, a cut link or its node. */
        UNREACHABLE,
        /** No answer in time: a flood or an overloaded machine; proves nothing. */
        SILENT;

        boolean lost() {
            return this == REFUSED || this == UNREACHABLE;
        }
    }

    /** The ranks a round of probes found lost, each with its verdict. */
    public record Lost(int[] ranks, Verdict[] verdicts) {
        /** "rank 1 died (...)" and/or "rank 2 cannot be reached (...)", for a message naming them. */
        public String describe() {
            List<String> parts = new ArrayList<>();
            for (Verdict v : List.of(Verdict.REFUSED, Verdict.UNREACHABLE)) {
                int[] these = IntStream.range(0, ranks.length).filter(i -> verdicts[i] == v).map(i -> ranks[i])
                        .toArray();
                if (these.length > 0) {
                    parts.add(RankFailedException.describe(these) + (v == Verdict.REFUSED
                            ? " died (its process no longer accepts connections)"
                            : " cannot be reached (no network path to it: a cut link, or its node is down)"));
                }
            }
            return String.join("; ", parts);
        }
    }

    /**
     * Probes {@code candidates} in parallel (at most about one second) and returns those a probe proved lost
     * (refused or unreachable); none if the endpoints are not known yet.
     */
    public Lost lostAmong(int[] candidates) {
        InetSocketAddress[] known = peers;
        if (known == null || candidates.length == 0) {
            return new Lost(new int[0], new Verdict[0]);
        }
        List<CompletableFuture<Verdict>> probes = Arrays.stream(candidates)
                .mapToObj(r -> CompletableFuture.supplyAsync(() -> probe(known[r], PROBE_TIMEOUT_MILLIS),
                        PeerLiveness::runOnDaemon))
                .toList();
        int[] lost = IntStream.range(0, candidates.length).filter(i -> probes.get(i).join().lost()).toArray();
        return new Lost(IntStream.of(lost).map(i -> candidates[i]).toArray(),
                IntStream.of(lost).mapToObj(i -> probes.get(i).join()).toArray(Verdict[]::new));
    }

    /** Every rank but {@code self}. */
    public static int[] othersThan(int self, int size) {
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

    /**
     * One probe. The JDK throws ConnectException for a refusal (with a connect timeout, a silent peer is a
     * SocketTimeoutException instead), NoRouteToHostException for EHOSTUNREACH, and a plain SocketException whose
     * text is strerror's "Network is unreachable" for ENETUNREACH, which has no class of its own.
     */
    static Verdict probe(InetSocketAddress target, int timeoutMillis) {
        try (Socket s = new Socket()) {
            s.connect(target, timeoutMillis);
            return Verdict.ANSWERS;
        } catch (java.net.ConnectException refused) {
            return Verdict.REFUSED;
        } catch (java.net.NoRouteToHostException noRoute) {
            return Verdict.UNREACHABLE;
        } catch (java.net.SocketTimeoutException silent) {
            return Verdict.SILENT;
        } catch (java.net.SocketException e) {
            String text = e.getMessage();
            return text != null && text.contains("unreachable") ? Verdict.UNREACHABLE : Verdict.SILENT;
        } catch (IOException other) {
            return Verdict.SILENT;
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
