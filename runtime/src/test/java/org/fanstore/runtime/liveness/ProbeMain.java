package org.fanstore.runtime.liveness;

import java.net.InetSocketAddress;

/**
 * Prints the verdict of one liveness probe ({@code ProbeMain <host> <port>}): run by {@link PeerLivenessTest} inside a
 * network namespace, where the network to a rank can be taken away without touching the machine's own.
 */
public final class ProbeMain {
    private ProbeMain() {
    }

    public static void main(String[] args) {
        System.out.println("VERDICT " + PeerLiveness.probe(new InetSocketAddress(args[0], Integer.parseInt(args[1])),
                1_000));
    }
}
