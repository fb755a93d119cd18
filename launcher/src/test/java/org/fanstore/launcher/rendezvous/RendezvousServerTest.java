package org.fanstore.launcher.rendezvous;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;

import org.fanstore.runtime.Await;
import org.fanstore.runtime.timing.Timing;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.fanstore.runtime.liveness.RankFailedException;
import org.fanstore.runtime.membership.JobSecret;
import org.fanstore.runtime.membership.JoinProtocol;

/**
 * The rendezvous server against fake ranks that speak the join protocol byte for byte, and against strangers:
 * silent, garbage, niodev's own greeting claiming ranks, a wrong proof, a thousand held connections.
 */
class RendezvousServerTest {
    private static final JobSecret SECRET = JobSecret.generate();

    /** Does what RankJoin does against the server and returns the table it receives. */
    private static CompletableFuture<String> fakeRank(RendezvousServer server, JobSecret secret, int rank,
                                                      int wport, int rport) {
        return CompletableFuture.supplyAsync(() -> {
            try (Socket s = new Socket(server.host(), server.port())) {
                s.setSoTimeout(20_000);
                var out = new DataOutputStream(s.getOutputStream());
                var in = new DataInputStream(s.getInputStream());
                out.write(JoinProtocol.hello(rank));
                byte[] nonce = new byte[JoinProtocol.NONCE_BYTES];
                in.readFully(nonce);
                out.write(JoinProtocol.proof(secret, nonce, rank));
                if (in.readByte() != JoinProtocol.ACCEPTED) {
                    throw new AssertionError("not accepted");
                }
                if (in.readByte() != JoinProtocol.GO) {
                    throw new AssertionError("no GO");
                }
                out.write(JoinProtocol.ports(wport, rport));
                byte[] table = new byte[in.readInt()];
                in.readFully(table);
                return new String(table, StandardCharsets.UTF_8);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, Executors.newSingleThreadExecutor());
    }

    @Test
    @Timeout(20)
    void repliesToEveryRankWithThePeerTableInRankOrderReadPortFirst() throws Exception {
        try (RendezvousServer server =
                RendezvousServer.start(InetAddress.getLoopbackAddress(), 3, SECRET, Duration.ofSeconds(10))) {
            // ranks connect out of order; the table must still be in rank order
            var r2 = fakeRank(server, SECRET, 2, 30002, 31002);
            var r0 = fakeRank(server, SECRET, 0, 30000, 31000);
            var r1 = fakeRank(server, SECRET, 1, 30001, 31001);
            server.awaitCompletion();
            String expected = "#Peer Information;127.0.0.1@31000@30000@0@0;127.0.0.1@31001@30001@1@0;"
                    + "127.0.0.1@31002@30002@2@0";
            assertEquals(expected, r0.get());
            assertEquals(expected, r1.get());
            assertEquals(expected, r2.get());
        }
    }

    @Test
    @Timeout(30)
    void strangersAreDroppedWithoutHoldingUpOrFailingTheJob() throws Exception {
        try (RendezvousServer server =
                RendezvousServer.start(InetAddress.getLoopbackAddress(), 2, SECRET, Duration.ofSeconds(20))) {
            List<Socket> held = new ArrayList<>();
            try {
                for (int i = 0; i < RendezvousServer.MAX_UNPROVEN + 100; i++) { // silent and held: the oldest are shed
                    held.add(new Socket(server.host(), server.port()));
                }
                Random random = new Random(35);
                int spoken = 0;
                for (int i = 0; i < 40; i++) {
                    Socket s = new Socket(server.host(), server.port());
                    held.add(s);
                    try { // the server may drop it at its first misfit, before the rest is written
                        var out = new DataOutputStream(s.getOutputStream());
                        switch (i % 5) {
                            case 0 -> { // niodev's own greeting, claiming rank 1 or rank 99
                                out.writeUTF("Sending Info");
                                out.writeInt(30000);
                                out.writeInt(31000);
                                out.writeInt(i % 2 == 0 ? 1 : 99);
                            }
                            case 1 -> { // a HELLO for rank 1 and a proof made with another secret
                                out.write(JoinProtocol.hello(1));
                                byte[] nonce = new byte[JoinProtocol.NONCE_BYTES];
                                new DataInputStream(s.getInputStream()).readFully(nonce);
                                out.write(JoinProtocol.proof(JobSecret.generate(), nonce, 1));
                            }
                            case 2 -> out.writeInt(Integer.MAX_VALUE); // a huge length
                            case 3 -> { // garbage
                                byte[] junk = new byte[4096];
                                random.nextBytes(junk);
                                out.write(junk);
                            }
                            default -> out.write(JoinProtocol.hello(0)); // then silent, never proving
                        }
                        out.flush();
                    } catch (java.io.IOException dropped) {
                        // as a stranger expects
                    }
                    spoken++;
                }
                long start = System.nanoTime();
                var r1 = fakeRank(server, SECRET, 1, 30001, 31001);
                var r0 = fakeRank(server, SECRET, 0, 30000, 31000);
                server.awaitCompletion();
                long millis = Duration.ofNanos(System.nanoTime() - start).toMillis();
                String expected = "#Peer Information;127.0.0.1@31000@30000@0@0;127.0.0.1@31001@30001@1@0";
                assertEquals(expected, r0.get());
                assertEquals(expected, r1.get());
                assertTrue(millis < Timing.HANDSHAKE_MILLIS / 2,
                        "the ranks waited " + millis + " ms behind strangers");
                // everything but the silent ones and the unproven HELLOs was dropped at its first misfit
                assertTrue(server.droppedConnections() >= spoken * 3 / 5, "dropped " + server.droppedConnections());
            } finally {
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }

    @Test
    @Timeout(20)
    void aMissingRankFailsWithinTheDeadlineNamingIt() throws Exception {
        try (RendezvousServer server =
                RendezvousServer.start(InetAddress.getLoopbackAddress(), 3, SECRET, Duration.ofSeconds(2))) {
            fakeRank(server, SECRET, 0, 30000, 31000);
            fakeRank(server, SECRET, 2, 30002, 31002);
            fakeRank(server, JobSecret.generate(), 1, 30001, 31001); // not this job's: does not count
            long start = System.nanoTime();
            RankFailedException e = assertThrows(RankFailedException.class, server::awaitCompletion);
            long seconds = Duration.ofNanos(System.nanoTime() - start).toSeconds();
            assertArrayEquals(new int[] {1}, e.ranks());
            assertTrue(e.getMessage().contains("rank 1 did not join"), e.getMessage());
            assertTrue(seconds <= 3, "took " + seconds + " s");
        }
    }

    @Test
    @Timeout(20)
    void aRankNumberClaimedTwiceByTheJobsOwnProcessesIsRejectedNamingBoth() throws Exception {
        try (RendezvousServer server =
                RendezvousServer.start(InetAddress.getLoopbackAddress(), 2, SECRET, Duration.ofSeconds(5))) {
            fakeRank(server, SECRET, 1, 30000, 31000);
            fakeRank(server, SECRET, 1, 30001, 31001);
            var e = assertThrows(java.io.IOException.class, server::awaitCompletion);
            assertTrue(e.getMessage().contains("rank 1 joined twice"), e.getMessage());
        }
    }

    @Test
    void refusesTheWildcardAddress() {
        assertThrows(IllegalArgumentException.class,
                () -> RendezvousServer.start(InetAddress.getByName("0.0.0.0"), 2, SECRET, Duration.ofSeconds(1)));
    }

    @Test
    @Timeout(20)
    void rendezvousFileIsPublishedAtomicallyAndAwaitedWithADeadline(@TempDir Path dir) throws Exception {
        var waiting = new CompletableFuture<RendezvousFile.Endpoint>();
        Thread waiter = new Thread(() -> {
            try {
                waiting.complete(RendezvousFile.await(dir, "job-7", Duration.ofSeconds(10)));
            } catch (Exception e) {
                waiting.completeExceptionally(e);
            }
        }, "rendezvous-waiter");
        waiter.start();
        // Publish only once the waiter has looked, found nothing and parked: the poll must see a later file.
        Await.until(Duration.ofSeconds(10), () -> waiter.getState() == Thread.State.TIMED_WAITING,
                "the waiter never started polling");
        RendezvousFile.publish(dir, "job-7", "10.1.2.3", 4567);
        assertEquals(new RendezvousFile.Endpoint("10.1.2.3", 4567), waiting.get());

        long start = System.nanoTime();
        var e = assertThrows(java.io.IOException.class,
                () -> RendezvousFile.await(dir, "job-8", Duration.ofMillis(300)));
        assertTrue(e.getMessage().contains("fanstore-rendezvous-job-8"), e.getMessage());
        assertTrue(Duration.ofNanos(System.nanoTime() - start).toMillis() < 2_000);
    }
}
