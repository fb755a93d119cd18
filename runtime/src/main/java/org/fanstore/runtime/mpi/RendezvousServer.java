package org.fanstore.runtime.mpi;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.stream.IntStream;

/**
 * Plays, for one job, the part MPJRun plays for {@code MPI.Init} (see {@link RendezvousProtocol}): accepts
 * exactly N ranks, then sends every rank the peer table in rank order, then closes.
 *
 * <p>It binds an ephemeral port on one given address, so jobs sharing a machine never collide, and it
 * refuses the wildcard address: the table carries the source address each rank connected from, and those
 * are only consistent (and reachable by every rank) when all ranks dial one concrete address. Giving the
 * launcher's own hostname is the known trap: Debian maps it to 127.0.1.1, which ranks on other nodes
 * cannot reach; pass an interface address ({@link #defaultBindAddress()}).
 *
 * <p>The whole exchange runs on a daemon thread bounded by the deadline; a rank that never shows up
 * becomes a {@link RankFailedException} naming it, from {@link #awaitCompletion()}.
 */
public final class RendezvousServer implements AutoCloseable {
    /** How long one connected rank may take to send its 3 ints; it has them ready before it connects. */
    private static final int READ_TIMEOUT_MILLIS = 10_000;

    private final ServerSocket listener;
    private final int ranks;
    private final long deadlineNanos;
    private final Duration deadline;
    private final Thread thread;
    private final List<Socket> accepted = new ArrayList<>();
    /** 1 for each rank whose info arrived; read by other threads through {@link #missingRanks()}. */
    private final AtomicIntegerArray joinedRanks;
    private volatile Throwable failure;
    private volatile boolean completed;

    private RendezvousServer(ServerSocket listener, int ranks, Duration deadline) {
        this.listener = listener;
        this.ranks = ranks;
        this.joinedRanks = new AtomicIntegerArray(ranks);
        this.deadline = deadline;
        this.deadlineNanos = BoundedWait.deadlineAfter(deadline);
        this.thread = new Thread(this::serve, "fanstore-rendezvous");
        this.thread.setDaemon(true);
    }

    /**
     * Binds an ephemeral port on {@code bindAddress} and starts waiting for {@code ranks} ranks.
     *
     * @param deadline how long, from now, all ranks have to connect
     */
    public static RendezvousServer start(InetAddress bindAddress, int ranks, Duration deadline) throws IOException {
        if (ranks < 1) {
            throw new IllegalArgumentException("ranks must be >= 1, got " + ranks);
        }
        if (bindAddress.isAnyLocalAddress()) {
            throw new IllegalArgumentException("bind the rendezvous to one concrete address, not "
                    + bindAddress.getHostAddress() + ": the peer table is built from the addresses ranks dial from");
        }
        ServerSocket listener = new ServerSocket();
        try {
            listener.bind(new InetSocketAddress(bindAddress, 0), ranks);
        } catch (IOException e) {
            listener.close();
            throw e;
        }
        RendezvousServer server = new RendezvousServer(listener, ranks, deadline);
        server.thread.start();
        return server;
    }

    /**
     * The first up, non-loopback IPv4 address of this host, else the loopback address: what a
     * multi-node job should bind to. (A hostname lookup is not used: Debian resolves it to 127.0.1.1.)
     */
    public static InetAddress defaultBindAddress() throws IOException {
        for (var nif : java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces())) {
            if (!nif.isUp() || nif.isLoopback()) {
                continue;
            }
            for (InetAddress a : java.util.Collections.list(nif.getInetAddresses())) {
                if (a instanceof java.net.Inet4Address && !a.isLinkLocalAddress()) {
                    return a;
                }
            }
        }
        return InetAddress.getLoopbackAddress();
    }

    /** The address to hand to ranks: an IP literal, never a name. */
    public String host() {
        return listener.getInetAddress().getHostAddress();
    }

    public int port() {
        return listener.getLocalPort();
    }

    /**
     * Waits (bounded by the deadline given at start, plus a little) until every rank has its table.
     *
     * @throws RankFailedException naming the ranks that never connected
     */
    public void awaitCompletion() throws IOException, InterruptedException {
        long left = deadlineNanos - System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        if (completed) {
            return;
        }
        Throwable f = failure;
        if (f instanceof IOException io) {
            throw io;
        }
        throw new IOException("rendezvous at " + host() + ":" + port() + " did not finish", f);
    }

    /**
     * The ranks that have not joined yet, ascending: lets a caller with a shorter patience than the deadline
     * name them, and stop its own ranks before the close makes MPJ print its stack traces.
     */
    public int[] missingRanks() {
        return IntStream.range(0, ranks).filter(r -> joinedRanks.get(r) == 0).toArray();
    }

    /** Whether the exchange is over, done or failed: {@link #awaitCompletion()} then returns at once. */
    public boolean finished() {
        return !thread.isAlive();
    }

    @Override
    public void close() {
        closeQuietly(listener);
        synchronized (accepted) {
            accepted.forEach(RendezvousServer::closeQuietly);
        }
        thread.interrupt();
    }

    private void serve() {
        RendezvousProtocol.RankInfo[] table = new RendezvousProtocol.RankInfo[ranks];
        List<DataOutputStream> replies = new ArrayList<>();
        try {
            int joined = 0;
            while (joined < ranks) {
                Socket socket = acceptBeforeDeadline(table);
                synchronized (accepted) {
                    accepted.add(socket);
                }
                socket.setSoTimeout(READ_TIMEOUT_MILLIS);
                socket.setTcpNoDelay(true);
                var in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
                var info = RendezvousProtocol.readRankInfo(in, socket.getInetAddress().getHostAddress());
                if (info.rank() < 0 || info.rank() >= ranks) {
                    throw new IOException("a process at " + info.address() + " claims rank " + info.rank()
                            + " but this job has ranks 0.." + (ranks - 1) + "; is it from another job?");
                }
                if (table[info.rank()] != null) {
                    throw new IOException("rank " + info.rank() + " joined twice (from "
                            + table[info.rank()].address() + " and " + info.address() + "); check the rank numbering");
                }
                table[info.rank()] = info;
                joinedRanks.set(info.rank(), 1);
                replies.add(new DataOutputStream(socket.getOutputStream()));
                joined++;
            }
            String peerTable = RendezvousProtocol.peerTable(table);
            for (DataOutputStream out : replies) {
                RendezvousProtocol.writePeerTable(out, peerTable);
            }
            completed = true;
        } catch (Throwable t) {
            failure = t;
        } finally {
            close();
        }
    }

    private Socket acceptBeforeDeadline(RendezvousProtocol.RankInfo[] table) throws IOException {
        long left = deadlineNanos - System.nanoTime();
        if (left > 0) {
            listener.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(left))));
            try {
                return listener.accept();
            } catch (SocketTimeoutException timedOut) {
                // fall through to the report below
            } catch (InterruptedIOException | java.net.SocketException closed) {
                if (listener.isClosed()) {
                    throw new IOException("rendezvous at " + host() + ":" + port()
                            + " was closed before all ranks joined");
                }
                throw closed;
            }
        }
        int[] missing = IntStream.range(0, ranks).filter(r -> table[r] == null).toArray();
        throw new RankFailedException(missing, RankFailedException.describe(missing) + " did not join the "
                + ranks + "-rank rendezvous at " + host() + ":" + port() + " within " + deadline.toSeconds()
                + " s; check that those processes started and can reach that address");
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing is best effort; nothing left to do with a socket that will not close
        }
    }
}
