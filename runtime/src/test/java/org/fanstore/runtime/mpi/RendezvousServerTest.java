package org.fanstore.runtime.mpi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.fanstore.runtime.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The rendezvous server against fake ranks that speak niodev's init protocol byte for byte. */
class RendezvousServerTest {

    /** Does what NIODevice.init does against the server and returns the table it receives. */
    private static CompletableFuture<String> fakeRank(String host, int port, int rank, int wport, int rport) {
        return CompletableFuture.supplyAsync(() -> {
            try (Socket s = new Socket(host, port)) {
                var out = new DataOutputStream(s.getOutputStream());
                out.writeUTF("Sending Info");
                out.writeInt(wport);
                out.writeInt(rport);
                out.writeInt(rank);
                out.flush();
                return new DataInputStream(s.getInputStream()).readUTF();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
    }

    @Test
    @Timeout(20)
    void repliesToEveryRankWithThePeerTableInRankOrderReadPortFirst() throws Exception {
        try (RendezvousServer server =
                RendezvousServer.start(InetAddress.getLoopbackAddress(), 3, Duration.ofSeconds(10))) {
            // ranks connect out of order; the table must still be in rank order
            var r2 = fakeRank(server.host(), server.port(), 2, 30002, 31002);
            var r0 = fakeRank(server.host(), server.port(), 0, 30000, 31000);
            var r1 = fakeRank(server.host(), server.port(), 1, 30001, 31001);
            server.awaitCompletion();
            String expected = "#Peer Information;127.0.0.1@31000@30000@0@0;127.0.0.1@31001@30001@1@0;"
                    + "127.0.0.1@31002@30002@2@0";
            assertEquals(expected, r0.get());
            assertEquals(expected, r1.get());
            assertEquals(expected, r2.get());
        }
    }

    @Test
    @Timeout(20)
    void aMissingRankFailsWithinTheDeadlineNamingIt() throws Exception {
        try (RendezvousServer server =
                RendezvousServer.start(InetAddress.getLoopbackAddress(), 3, Duration.ofSeconds(2))) {
            fakeRank(server.host(), server.port(), 0, 30000, 31000);
            fakeRank(server.host(), server.port(), 2, 30002, 31002);
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
    void aRankNumberClaimedTwiceIsRejectedNamingBoth() throws Exception {
        try (RendezvousServer server =
                RendezvousServer.start(InetAddress.getLoopbackAddress(), 2, Duration.ofSeconds(5))) {
            fakeRank(server.host(), server.port(), 1, 30000, 31000);
            fakeRank(server.host(), server.port(), 1, 30001, 31001);
            var e = assertThrows(java.io.IOException.class, server::awaitCompletion);
            assertTrue(e.getMessage().contains("rank 1 joined twice"), e.getMessage());
        }
    }

    @Test
    void refusesTheWildcardAddress() {
        assertThrows(IllegalArgumentException.class,
                () -> RendezvousServer.start(InetAddress.getByName("0.0.0.0"), 2, Duration.ofSeconds(1)));
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
