package org.fanstore.launcher.rendezvous;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.fanstore.runtime.liveness.RankFailedException;
import org.fanstore.runtime.membership.JobSecret;
import org.fanstore.runtime.membership.JoinProtocol;
import org.fanstore.runtime.membership.RendezvousProtocol;
import org.fanstore.runtime.world.BoundedWait;

/**
 * The job's rendezvous (README.md): counts a rank only after it proved it holds the job's secret
 * ({@link JoinProtocol}), then hands every rank niodev's peer table in rank order, then closes.
 *
 * <p>It binds an ephemeral port on one given address, so jobs sharing a machine never collide, and it
 * refuses the wildcard address: the table carries the source address each rank connected from, and those
 * are only consistent (and reachable by every rank) when all ranks dial one concrete address. Giving the
 * launcher's own hostname is the known trap: Debian maps it to 127.0.1.1, which ranks on other nodes
 * cannot reach; pass an interface address ({@link #defaultBindAddress()}), or loopback for one machine.
 *
 * <p>One daemon selector thread serves every connection, bounded by the deadline; a rank that never shows up
 * becomes a {@link RankFailedException} naming it, from {@link #awaitCompletion()}. Connections that do not
 * prove themselves are dropped, silently and without holding anyone up: nothing a stranger sends fails the job.
 */
public final class RendezvousServer implements AutoCloseable {
    /** Unproven connections held at once; beyond this the oldest is dropped (a flood cannot exhaust descriptors). */
    static final int MAX_UNPROVEN = 1024;

    private final ServerSocketChannel listener;
    private final Selector selector;
    private final String host;
    private final int port;
    private final int ranks;
    private final JobSecret secret;
    private final long deadlineNanos;
    private final Duration deadline;
    private final Thread thread;
    private final SecureRandom random = new SecureRandom();
    /** Proven connections by rank (selector thread only). */
    private final Peer[] proven;
    /** Unproven connections, oldest first (selector thread only). */
    private final ArrayDeque<Peer> unproven = new ArrayDeque<>();
    /** 1 for each rank that proved itself; read by other threads through {@link #missingRanks()}. */
    private final AtomicIntegerArray joinedRanks;
    private final AtomicLong dropped = new AtomicLong();
    private volatile Throwable failure;
    private volatile boolean completed;
    private boolean goSent;

    /** One connection and where it is in the protocol. */
    private static final class Peer {
        final SocketChannel channel;
        final String address;
        final long handshakeDeadline;
        final ByteBuffer in = ByteBuffer.allocate(JoinProtocol.PROOF_BYTES);
        int rank = -1;
        byte[] nonce;
        boolean proven;
        int writePort = -1;
        int readPort = -1;

        Peer(SocketChannel channel, String address, long handshakeDeadline) {
            this.channel = channel;
            this.address = address;
            this.handshakeDeadline = handshakeDeadline;
            in.limit(JoinProtocol.HELLO_BYTES);
        }
    }

    private RendezvousServer(ServerSocketChannel listener, Selector selector, int ranks, JobSecret secret,
                             Duration deadline) {
        this.listener = listener;
        this.selector = selector;
        InetSocketAddress bound = (InetSocketAddress) listener.socket().getLocalSocketAddress();
        this.host = bound.getAddress().getHostAddress();
        this.port = bound.getPort();
        this.ranks = ranks;
        this.secret = secret;
        this.proven = new Peer[ranks];
        this.joinedRanks = new AtomicIntegerArray(ranks);
        this.deadline = deadline;
        this.deadlineNanos = BoundedWait.deadlineAfter(deadline);
        this.thread = new Thread(this::serve, "fanstore-rendezvous");
        this.thread.setDaemon(true);
    }

    /**
     * Binds an ephemeral port on {@code bindAddress} and starts waiting for {@code ranks} ranks that hold
     * {@code secret}.
     *
     * @param deadline how long, from now, all ranks have to join
     */
    public static RendezvousServer start(InetAddress bindAddress, int ranks, JobSecret secret, Duration deadline)
            throws IOException {
        if (ranks < 1) {
            throw new IllegalArgumentException("ranks must be >= 1, got " + ranks);
        }
        if (bindAddress.isAnyLocalAddress()) {
            throw new IllegalArgumentException("bind the rendezvous to one concrete address, not "
                    + bindAddress.getHostAddress() + ": the peer table is built from the addresses ranks dial from");
        }
        ServerSocketChannel listener = ServerSocketChannel.open();
        Selector selector = null;
        try {
            listener.bind(new InetSocketAddress(bindAddress, 0), Math.max(64, ranks));
            listener.configureBlocking(false);
            selector = Selector.open();
            listener.register(selector, SelectionKey.OP_ACCEPT);
        } catch (IOException e) {
            listener.close();
            if (selector != null) {
                selector.close();
            }
            throw e;
        }
        RendezvousServer server = new RendezvousServer(listener, selector, ranks, secret, deadline);
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
        return host;
    }

    public int port() {
        return port;
    }

    /** Connections dropped so far because they did not prove themselves in time or sent what does not fit. */
    public long droppedConnections() {
        return dropped.get();
    }

    /**
     * Waits (bounded by the deadline given at start, plus a little) until every rank has its table.
     *
     * @throws RankFailedException naming the ranks that never joined
     */
    public void awaitCompletion() throws IOException, InterruptedException {
        long left = deadlineNanos - System.nanoTime() + COMPLETION_SLACK_NANOS;
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
        thread.interrupt();
        closeQuietly(listener);
        closeQuietly(selector); // wakes the thread; it then closes every connection
    }

    private void serve() {
        try {
            while (!completed) {
                long now = System.nanoTime();
                if (now - deadlineNanos >= 0) {
                    throw missing();
                }
                selector.select(Math.max(1, Math.min(TICK_MILLIS, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - now))));
                if (!selector.isOpen() || Thread.currentThread().isInterrupted()) {
                    throw new IOException("rendezvous at " + host + ":" + port + " was closed before all ranks joined");
                }
                for (var it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                    SelectionKey key = it.next();
                    it.remove();
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.isAcceptable()) {
                        acceptAll();
                    } else if (key.isReadable()) {
                        Peer peer = (Peer) key.attachment();
                        if (!read(peer)) {
                            lost(peer);
                        }
                    }
                }
                expireUnproven(System.nanoTime());
            }
        } catch (java.nio.channels.ClosedSelectorException closed) {
            if (!completed) {
                failure = new IOException("rendezvous at " + host + ":" + port + " was closed before all ranks joined");
            }
        } catch (Throwable t) {
            failure = t;
        } finally {
            closeQuietly(listener);
            closeQuietly(selector);
            for (Peer p : proven) {
                if (p != null) {
                    closeQuietly(p.channel);
                }
            }
            unproven.forEach(p -> closeQuietly(p.channel));
        }
    }

    private void acceptAll() throws IOException {
        SocketChannel channel;
        while ((channel = listener.accept()) != null) {
            String address = ((InetSocketAddress) channel.getRemoteAddress()).getAddress().getHostAddress();
            Peer peer = new Peer(channel, address, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HANDSHAKE_MILLIS));
            try {
                channel.configureBlocking(false);
                channel.socket().setTcpNoDelay(true);
                channel.register(selector, SelectionKey.OP_READ, peer);
            } catch (IOException e) {
                closeQuietly(channel);
                continue;
            }
            unproven.addLast(peer);
            while (unproven.size() > MAX_UNPROVEN) {
                drop(unproven.pollFirst());
            }
        }
    }

    /** Reads what is there and advances; false when the connection is to be dropped. */
    private boolean read(Peer peer) throws IOException {
        int n;
        try {
            n = peer.channel.read(peer.in);
        } catch (IOException reset) {
            return false;
        }
        if (n < 0) {
            return false;
        }
        if (peer.in.hasRemaining()) {
            return true;
        }
        ByteBuffer in = peer.in.flip();
        if (peer.nonce == null) { // HELLO
            if (in.getInt() != JoinProtocol.MAGIC) {
                return false;
            }
            peer.rank = in.getInt();
            peer.nonce = new byte[JoinProtocol.NONCE_BYTES];
            random.nextBytes(peer.nonce);
            if (!writeFully(peer, ByteBuffer.wrap(peer.nonce))) {
                return false;
            }
            in.clear().limit(JoinProtocol.PROOF_BYTES);
            return true;
        }
        if (!peer.proven) { // PROOF
            byte[] answer = new byte[JoinProtocol.PROOF_BYTES];
            in.get(answer);
            if (!MessageDigest.isEqual(answer, JoinProtocol.proof(secret, peer.nonce, peer.rank))
                    || !writeFully(peer, ByteBuffer.wrap(new byte[] {JoinProtocol.ACCEPTED}))) {
                return false;
            }
            proved(peer);
            in.clear().limit(JoinProtocol.PORTS_BYTES);
            return true;
        }
        if (peer.writePort < 0 && goSent) { // PORTS
            peer.writePort = in.getInt();
            peer.readPort = in.getInt();
            peer.channel.keyFor(selector).interestOps(0); // nothing more is expected from this rank
            if (Arrays.stream(proven).allMatch(p -> p != null && p.writePort >= 0)) {
                sendTables();
            }
            return true;
        }
        return false; // a proven rank sending out of turn: its runtime is broken; lost() names it
    }

    /** A connection that just proved it holds the secret: counts as its rank, or is an error of this job. */
    private void proved(Peer peer) throws IOException {
        unproven.remove(peer);
        if (peer.rank < 0 || peer.rank >= ranks) {
            throw new IOException("a process of this job at " + peer.address + " joined as rank " + peer.rank
                    + " but this job has ranks 0.." + (ranks - 1) + "; check the rank numbering");
        }
        if (proven[peer.rank] != null) {
            throw new IOException("rank " + peer.rank + " joined twice (from " + proven[peer.rank].address + " and "
                    + peer.address + "); check the rank numbering");
        }
        peer.proven = true;
        proven[peer.rank] = peer;
        joinedRanks.set(peer.rank, 1);
        if (Arrays.stream(proven).allMatch(p -> p != null)) {
            for (Peer p : proven) {
                if (!writeFully(p, ByteBuffer.wrap(new byte[] {JoinProtocol.GO}))) {
                    throw lostRank(p);
                }
            }
            goSent = true;
        }
    }

    private void sendTables() throws IOException {
        RendezvousProtocol.RankInfo[] table = new RendezvousProtocol.RankInfo[ranks];
        for (Peer p : proven) {
            table[p.rank] = new RendezvousProtocol.RankInfo(p.rank, p.writePort, p.readPort, p.address);
        }
        byte[] text = RendezvousProtocol.peerTable(table).getBytes(StandardCharsets.UTF_8);
        ByteBuffer message = ByteBuffer.allocate(4 + text.length).putInt(text.length).put(text);
        selector.close(); // deregisters every channel, so they can block for this last write
        for (Peer p : proven) {
            p.channel.configureBlocking(true);
            p.channel.socket().setSoTimeout((int) HANDSHAKE_MILLIS);
            p.channel.write(message.duplicate().flip());
        }
        completed = true;
    }

    /** A proven rank's connection ended or misbehaved before the table: that rank cannot be in the world. */
    private void lost(Peer peer) throws IOException {
        if (peer.proven) {
            throw lostRank(peer);
        }
        unproven.remove(peer);
        drop(peer);
    }

    private RankFailedException lostRank(Peer peer) {
        int[] who = {peer.rank};
        return new RankFailedException(who, RankFailedException.describe(who) + " left the " + ranks
                + "-rank rendezvous at " + host + ":" + port + " before every rank joined (its process ended?)");
    }

    private void expireUnproven(long now) {
        while (!unproven.isEmpty() && now - unproven.peekFirst().handshakeDeadline >= 0) {
            drop(unproven.pollFirst());
        }
    }

    private void drop(Peer peer) {
        dropped.incrementAndGet();
        closeQuietly(peer.channel);
    }

    private RankFailedException missing() {
        int[] notJoined = missingRanks();
        if (notJoined.length > 0) {
            return new RankFailedException(notJoined, RankFailedException.describe(notJoined) + " did not join the "
                    + ranks + "-rank rendezvous at " + host + ":" + port + " within " + deadline.toSeconds()
                    + " s; check that those processes started and can reach that address");
        }
        int[] noPorts = IntStream.range(0, ranks).filter(r -> proven[r].writePort < 0).toArray();
        return new RankFailedException(noPorts, RankFailedException.describe(noPorts) + " joined the rendezvous at "
                + host + ":" + port + " but did not start MPJ within " + deadline.toSeconds() + " s");
    }

    /** A write of a few bytes to a fresh connection: all of it fits the socket buffer, or the peer is broken. */
    private static boolean writeFully(Peer peer, ByteBuffer bytes) {
        try {
            peer.channel.write(bytes);
            return !bytes.hasRemaining();
        } catch (IOException e) {
            return false;
        }
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing is best effort; nothing left to do with a socket that will not close
        }
    }
}
