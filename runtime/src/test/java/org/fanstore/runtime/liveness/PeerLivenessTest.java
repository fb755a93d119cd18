package org.fanstore.runtime.liveness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * What a liveness probe proves, against the real kernel: a listening port answers; a closed one is refused (its
 * process is gone); a rank with no network path to it (a cut link) is unreachable, and both are lost, with words
 * that say which. A silent peer (a flood) is covered by StrangersTest.
 */
class PeerLivenessTest {
    @Test
    void aListeningPortAnswersAndAClosedOneIsRefused() throws Exception {
        InetSocketAddress closed;
        try (ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            InetSocketAddress open = new InetSocketAddress(InetAddress.getLoopbackAddress(), s.getLocalPort());
            assertEquals(PeerLiveness.Verdict.ANSWERS, PeerLiveness.probe(open, 1_000));
            closed = open;
        }
        assertEquals(PeerLiveness.Verdict.REFUSED, PeerLiveness.probe(closed, 1_000));
    }

    /** In a namespace holding only its loopback, 198.18.0.2 has no route: what a rank sees after a cut link. */
    @Test
    void aRankWithNoRouteToItIsUnreachableNotDead() throws Exception {
        assumeTrue("0".equals(run(List.of("id", "-u")).trim()), "needs root for a network namespace");
        String ns = "fsprobe" + ProcessHandle.current().pid();
        assertEquals("", run(List.of("ip", "netns", "add", ns)).trim());
        try {
            run(List.of("ip", "-n", ns, "link", "set", "lo", "up"));
            List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", ns,
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                    System.getProperty("java.class.path") + File.pathSeparator + "/usr/share/java/mpj.jar",
                    ProbeMain.class.getName(), "198.18.0.2", "4000"));
            String out = run(cmd);
            assertTrue(out.contains("VERDICT UNREACHABLE"), out);
        } finally {
            run(List.of("ip", "netns", "del", ns));
        }
        PeerLiveness.Lost lost = new PeerLiveness.Lost(new int[] {1, 2},
                new PeerLiveness.Verdict[] {PeerLiveness.Verdict.REFUSED, PeerLiveness.Verdict.UNREACHABLE});
        assertEquals("rank 1 died (its process no longer accepts connections); rank 2 cannot be reached (no network"
                + " path to it: a cut link, or its node is down)", lost.describe());
    }

    private static String run(List<String> cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), String.join(" ", cmd));
        return new String(out, StandardCharsets.UTF_8);
    }
}
