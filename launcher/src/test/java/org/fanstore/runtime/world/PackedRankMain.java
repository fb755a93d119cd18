package org.fanstore.runtime.world;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import mpi.MPI;
import mpi.Request;
import org.fanstore.runtime.fetch.RankMain;
import org.fanstore.runtime.fetch.RemoteFetcher;

/**
 * One of two ranks checking {@link PackedMessages} across real processes: rank 1 sends messages of several lengths
 * whose first data byte is never 0 (a message without a section header stalled on exactly that), rank 0 checks every
 * byte. Round 1: every message arrives before rank 0 posts its receive (niodev keeps it, then copies it into the
 * posted buffer). Round 2: rank 0 posts every receive before rank 1 sends (niodev reads the socket into the buffer).
 * Prints {@code PACKED_OK} and exits 0 only if every byte of both rounds held.
 *
 * <p>Usage: {@code PackedRankMain <rank> <endpoint>} (endpoint as for {@link RankMain}).
 */
public final class PackedRankMain {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final int[] LENGTHS = {1, 7, 4096, 65_536, 131_072, RemoteFetcher.DEFAULT_CHUNK_BYTES};
    private static final int DATA_TAG = 100;
    private static final int SIGNAL_TAG = 101;

    private PackedRankMain() {
    }

    public static void main(String[] args) {
        try {
            System.exit(run(Integer.parseInt(args[0]), args[1]));
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static int run(int rank, String endpoint) throws Exception {
        MpiWorld world = RankMain.join(rank, 2, endpoint);
        if (rank == 1) {
            sendAll(world, 1);
            signal(world, 0, "sent");
            awaitSignal(world, 0);
            sendAll(world, 2);
        } else {
            awaitSignal(world, 1);            // everything of round 1 has arrived: one socket, in order
            ByteBuffer one = PackedMessages.forReceiving(LENGTHS[LENGTHS.length - 1]);
            for (int i = 0; i < LENGTHS.length; i++) {
                await(PackedMessages.irecv(world.comm(), one, 1, DATA_TAG), "round 1 message " + i);
                check(one, 1, i);
            }
            Request[] posted = new Request[LENGTHS.length];
            ByteBuffer[] buffers = new ByteBuffer[LENGTHS.length];
            for (int i = 0; i < LENGTHS.length; i++) {
                buffers[i] = PackedMessages.forReceiving(LENGTHS[i]);
                posted[i] = PackedMessages.irecv(world.comm(), buffers[i], 1, DATA_TAG);
            }
            signal(world, 1, "posted");
            for (int i = 0; i < LENGTHS.length; i++) {
                await(posted[i], "round 2 message " + i);
                check(buffers[i], 2, i);
            }
            System.out.println("PACKED_OK");
        }
        world.barrier(TIMEOUT);
        System.out.println("FINALIZED " + world.finalizeWorld(Duration.ofSeconds(10)));
        System.out.flush();
        return 0;
    }

    private static byte pattern(int round, int message, int index) {
        return (byte) (1 + (31 * message + 7 * index + 13 * round) % 255);   // 1..255: never 0
    }

    private static void sendAll(MpiWorld world, int round) throws Exception {
        ByteBuffer b = PackedMessages.forSending(LENGTHS[LENGTHS.length - 1]);
        for (int i = 0; i < LENGTHS.length; i++) {
            for (int j = 0; j < LENGTHS[i]; j++) {
                b.put(PackedMessages.sendOffset() + j, pattern(round, i, j));
            }
            await(PackedMessages.isend(world.comm(), b, LENGTHS[i], 0, DATA_TAG), "sending message " + i);
        }
    }

    private static void check(ByteBuffer b, int round, int message) {
        for (int j = 0; j < LENGTHS[message]; j++) {
            byte got = b.get(PackedMessages.receiveOffset() + j);
            if (got != pattern(round, message, j)) {
                throw new AssertionError("round " + round + " message " + message + " (" + LENGTHS[message]
                        + " bytes): byte " + j + " is " + got + ", expected " + pattern(round, message, j));
            }
        }
    }

    private static void signal(MpiWorld world, int to, String what) throws Exception {
        byte[] b = what.getBytes(StandardCharsets.US_ASCII);
        await(world.comm().Isend(b, 0, b.length, MPI.BYTE, to, SIGNAL_TAG), "signal " + what);
    }

    private static void awaitSignal(MpiWorld world, int from) throws Exception {
        byte[] b = new byte[16];
        await(world.comm().Irecv(b, 0, b.length, MPI.BYTE, from, SIGNAL_TAG), "signal from rank " + from);
    }

    private static void await(Request r, String what) {
        if (BoundedWait.until(r, BoundedWait.deadlineAfter(TIMEOUT)) == null) {
            throw new AssertionError(what + ": nothing for " + TIMEOUT.toSeconds() + " s");
        }
    }
}
