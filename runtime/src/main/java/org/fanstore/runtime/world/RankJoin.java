package org.fanstore.runtime.world;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import mpi.MPI;
import org.fanstore.runtime.membership.JobSecret;
import org.fanstore.runtime.membership.JoinProtocol;
import org.fanstore.runtime.membership.RendezvousProtocol;

/**
 * One rank's way into the world (README.md): proves to the job's {@link RendezvousServer} that it holds the job's
 * secret, waits for GO, then runs {@code MPI.Init} against a listener of its own on 127.0.0.1 that answers only
 * this JVM's niodev (the connection whose source port is niodev's {@code clientSock}), relays niodev's ports and
 * the peer table, and after init closes niodev's two listening sockets.
 *
 * <p>Reads three fields of MPJ Express 0.44 by reflection (MPJ is on the class path, so nothing needs opening):
 * {@code mpjdev.javampjdev.MPJDev.dev} (the device, set before its {@code init} runs), and the device's
 * {@code clientSock}, {@code writableServerChannel} and {@code readableServerChannel}.
 */
public final class RankJoin {
    private RankJoin() {
    }

    /** Joins; on return {@code MPI.COMM_WORLD} is this job's world and no niodev port listens. */
    static void join(int rank, int size, String host, int port, JobSecret secret, int protocolSwitchLimit,
                     long deadline) throws IOException, InterruptedException {
        try (Socket server = proveMembership(rank, host, port, secret, deadline)) {
            var out = new DataOutputStream(server.getOutputStream());
            var in = new DataInputStream(server.getInputStream());
            byte[] go = new byte[1];
            readFully(server, in, go, deadline, rank, "GO (every rank joined)");
            if (go[0] != JoinProtocol.GO) {
                throw new IOException("rank " + rank + ": the rendezvous at " + host + ":" + port + " answered "
                        + go[0] + " instead of GO");
            }
            try (ServerSocket local = new ServerSocket()) {
                local.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
                CompletableFuture<Void> init = startInit(rank, size, protocolSwitchLimit,
                        local.getInetAddress().getHostAddress(), local.getLocalPort());
                try (Socket mpj = acceptOwnMpj(local, init, deadline, rank)) {
                    var fromMpj = new DataInputStream(mpj.getInputStream());
                    mpj.setSoTimeout(millisLeft(deadline, rank));
                    var info = RendezvousProtocol.readRankInfo(fromMpj, "this rank's MPJ");
                    out.write(JoinProtocol.ports(info.writePort(), info.readPort()));
                    out.flush();
                    byte[] length = new byte[4];
                    readFully(server, in, length, deadline, rank, "the peer table");
                    int n = java.nio.ByteBuffer.wrap(length).getInt();
                    if (n <= 0 || n > RendezvousProtocol.MAX_TABLE_BYTES) {
                        throw new IOException("rank " + rank + ": the rendezvous sent a peer table of " + n + " bytes");
                    }
                    byte[] table = new byte[n];
                    readFully(server, in, table, deadline, rank, "the peer table");
                    RendezvousProtocol.writePeerTable(new DataOutputStream(mpj.getOutputStream()),
                            new String(table, StandardCharsets.UTF_8));
                    awaitInit(init, deadline, rank, size, host, port);
                }
            }
        }
        closeNiodevListeners();
    }

    /**
     * A connection on which the rendezvous accepted this rank (HELLO, proof, ACCEPTED). A connection dropped before
     * ACCEPTED (the server sheds the oldest unproven connections when strangers hold many) is simply made again.
     */
    private static Socket proveMembership(int rank, String host, int port, JobSecret secret, long deadline)
            throws IOException, InterruptedException {
        while (true) {
            Socket server = new Socket();
            try {
                server.connect(new InetSocketAddress(host, port), millisLeft(deadline, rank));
                server.setTcpNoDelay(true);
                var out = new DataOutputStream(server.getOutputStream());
                var in = new DataInputStream(server.getInputStream());
                out.write(JoinProtocol.hello(rank));
                out.flush();
                byte[] nonce = new byte[JoinProtocol.NONCE_BYTES];
                readFully(server, in, nonce, deadline, rank, "its challenge");
                out.write(JoinProtocol.proof(secret, nonce, rank));
                out.flush();
                byte[] accepted = new byte[1];
                readFully(server, in, accepted, deadline, rank, "its acceptance");
                if (accepted[0] == JoinProtocol.ACCEPTED) {
                    return server;
                }
                server.close();
            } catch (DroppedException dropped) {
                server.close();
                Thread.sleep(RETRY_MILLIS);
            } catch (IOException | RuntimeException e) {
                server.close();
                throw e;
            }
        }
    }

    /** The rendezvous closed the connection (before ACCEPTED: shed; after it: the job failed elsewhere). */
    private static final class DroppedException extends IOException {
        private static final long serialVersionUID = 1L;

        DroppedException(String message) {
            super(message);
        }
    }

    private static CompletableFuture<Void> startInit(int rank, int size, int psl, String host, int port) {
        String conf = RendezvousProtocol.inlineConf(size, psl, host, port);
        String[] args = {Integer.toString(rank), conf, "niodev"};
        CompletableFuture<Void> joined = new CompletableFuture<>();
        Thread starter = new Thread(() -> {
            try {
                MPI.Init(args);
                joined.complete(null);
            } catch (Throwable t) {
                joined.completeExceptionally(t);
            }
        }, "fanstore-mpi-init");
        starter.setDaemon(true);
        starter.start();
        return joined;
    }

    /** The connection niodev made to {@code local}; any other (another process found the port) is closed unread. */
    private static Socket acceptOwnMpj(ServerSocket local, CompletableFuture<Void> init, long deadline, int rank)
            throws IOException, InterruptedException {
        local.setSoTimeout(STEP_MILLIS);
        while (true) {
            Socket candidate;
            try {
                candidate = local.accept();
            } catch (SocketTimeoutException notYet) {
                checkInit(init, deadline, rank, "connect to its rendezvous listener");
                continue;
            }
            int own = awaitNiodevClientPort(init, deadline, rank);
            if (candidate.getPort() == own && candidate.getInetAddress().isLoopbackAddress()) {
                return candidate;
            }
            candidate.close();
        }
    }

    /** The local port of niodev's rendezvous socket, once its constructor connected. */
    private static int awaitNiodevClientPort(CompletableFuture<Void> init, long deadline, int rank)
            throws IOException, InterruptedException {
        while (true) {
            Object device = niodev();
            Socket s = device == null ? null : (Socket) field(device, "clientSock");
            if (s != null && s.getLocalPort() > 0) {
                return s.getLocalPort();
            }
            checkInit(init, deadline, rank, "connect to its rendezvous listener");
            Thread.sleep(SOCKET_POLL_MILLIS);
        }
    }

    private static void checkInit(CompletableFuture<Void> init, long deadline, int rank, String what)
            throws IOException {
        if (init.isCompletedExceptionally()) {
            Throwable cause = init.handle((v, t) -> t.getCause() != null ? t.getCause() : t).join();
            throw new IOException("rank " + rank + ": MPI.Init failed before it could " + what
                    + (cause.getMessage() == null ? "" : ": " + cause.getMessage()), cause);
        }
        if (System.nanoTime() - deadline >= 0) {
            throw new IOException("rank " + rank + ": MPJ did not " + what + " in time");
        }
    }

    private static void awaitInit(CompletableFuture<Void> init, long deadline, int rank, int size, String host,
                                  int port) throws IOException, InterruptedException {
        try {
            init.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new IOException("rank " + rank + ": MPI.Init did not complete; some of the " + size
                    + " ranks could not connect to each other (rendezvous at " + host + ":" + port + ")");
        } catch (ExecutionException e) {
            String why = e.getCause().getMessage();
            throw new IOException("rank " + rank + ": MPI.Init failed" + (why == null ? "" : ": " + why), e.getCause());
        }
    }

    /**
     * Closes niodev's two listening sockets. niodev binds them on every interface (README.md) and, after init,
     * would take any connection to them for a peer's; nothing in niodev accepts again after init.
     */
    static void closeNiodevListeners() throws IOException {
        Object device = niodev();
        if (device == null) {
            throw new IOException("MPJ's niodev device is not there after MPI.Init");
        }
        for (String name : new String[] {"writableServerChannel", "readableServerChannel"}) {
            ServerSocketChannel channel = (ServerSocketChannel) field(device, name);
            if (channel != null) {
                channel.close();
            }
        }
    }

    /** niodev's listening ports while they are open (for tests: after join they are refused). */
    public static int[] niodevPorts() {
        Object device = niodev();
        return new int[] {(Integer) field(device, "wport"), (Integer) field(device, "rport")};
    }

    static Object niodev() {
        try {
            Field dev = Class.forName("mpjdev.javampjdev.MPJDev").getDeclaredField("dev");
            dev.setAccessible(true);
            return dev.get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("this runtime needs MPJ Express 0.44: its niodev device was not found", e);
        }
    }

    static Object field(Object device, String name) {
        try {
            Field f = device.getClass().getDeclaredField(name);
            f.setAccessible(true);
            return f.get(device);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("this runtime needs MPJ Express 0.44: its niodev device has no " + name,
                    e);
        }
    }

    private static void readFully(Socket s, DataInputStream in, byte[] into, long deadline, int rank, String what)
            throws IOException {
        try {
            s.setSoTimeout(millisLeft(deadline, rank));
            in.readFully(into);
        } catch (SocketTimeoutException e) {
            throw new IOException("rank " + rank + ": the rendezvous did not send " + what + " in time");
        } catch (java.io.EOFException | java.net.SocketException e) {
            throw new DroppedException("rank " + rank + ": the rendezvous closed the connection while this rank"
                    + " waited for " + what + " (the job failed to start elsewhere)");
        }
    }

    private static int millisLeft(long deadline, int rank) throws IOException {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (left <= 0) {
            throw new IOException("rank " + rank + ": the join did not complete in time");
        }
        return (int) Math.min(Integer.MAX_VALUE, left);
    }
}
