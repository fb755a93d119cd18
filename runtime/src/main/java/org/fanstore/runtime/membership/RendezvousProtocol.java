package org.fanstore.runtime.membership;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The wire protocol MPJ Express 0.44's niodev speaks during {@code MPI.Init}, read off the bytecode
 * ({@code javap -c -p}) of {@code xdev.niodev.NIODevice.init} (the rank side) and
 * {@code runtime.starter.MPJRun} in starter.jar (the server side MPJRun normally plays):
 *
 * <ol>
 *   <li>The rank binds two listening sockets on all interfaces, on random ports in 25000-40000: first the
 *       "write" server port {@code wport}, then the "read" server port {@code rport}.</li>
 *   <li>It opens a plain {@code java.net.Socket(serverName, serverPort)} (no timeout) and sends, each via
 *       {@code DataOutputStream}: {@code writeUTF("Sending Info")}, {@code writeInt(wport)},
 *       {@code writeInt(rport)}, {@code writeInt(rank)}.</li>
 *   <li>It blocks in one {@code readUTF()} for the peer table, then closes the socket.</li>
 *   <li>The table is {@code "#Peer Information"} followed, for each rank 0..N-1 in rank order, by
 *       {@code ";" + ip + "@" + rport + "@" + wport + "@" + rank + "@" + debugPort}. Note the order: read
 *       port before write port, the reverse of the order the rank sent them. The rank tokenises on ';' then
 *       '@' and uses the first four fields (host, read port, write port, rank); MPJRun appends its
 *       debug port (0 when not debugging), which niodev ignores. {@code ip} is
 *       {@code socket.getInetAddress().getHostAddress()}: the source address the server saw the rank
 *       connect from, never a name the rank resolved itself.</li>
 * </ol>
 * The listening address cannot be chosen: {@code NIODevice.bindPort} binds
 * {@code new InetSocketAddress(randomPort)}, the wildcard, and {@code init} reads only the four conf keys of
 * {@link #inlineConf} and no system property; the peer table only decides where a rank connects to, not where
 * it listens. Short of patching MPJ, every rank accepts connections on all interfaces, even when the whole job
 * is on one machine; {@link RankJoin} keeps that to the moment the ranks connect to each other and then closes
 * both sockets (README.md). fanstore's own rendezvous never speaks this protocol on the network: each rank plays
 * MPJRun's part for its own niodev on loopback ({@link RankJoin}).
 * MPJRun checks the greeting with {@code startsWith("Sending Info")}. The table is sent with
 * {@code writeUTF}, so it must stay under 65535 bytes of modified UTF-8: about 2000 ranks.
 */
public final class RendezvousProtocol {
    public static final String GREETING = "Sending Info";
    public static final String TABLE_HEADER = "#Peer Information";
    /** MPJRun's debug port when not debugging; the fifth field niodev ignores. */
    public static final int NO_DEBUG_PORT = 0;
    /** {@code writeUTF}'s limit on the encoded table. */
    public static final int MAX_TABLE_BYTES = 65535;

    private RendezvousProtocol() {
    }

    /** What one rank tells the server: its rank and its two niodev listening ports. */
    public record RankInfo(int rank, int writePort, int readPort, String address) {
    }

    /** Reads the greeting and the three ints a rank sends; {@code address} is where it connected from. */
    public static RankInfo readRankInfo(DataInputStream in, String address) throws IOException {
        String greeting = in.readUTF();
        if (!greeting.startsWith(GREETING)) {
            throw new IOException("not an MPJ niodev rank at " + address + ": greeting '" + greeting + "'");
        }
        int writePort = in.readInt();
        int readPort = in.readInt();
        int rank = in.readInt();
        return new RankInfo(rank, writePort, readPort, address);
    }

    /** The reply every rank receives; {@code ranks[i]} must be rank i. */
    public static String peerTable(RankInfo[] ranks) {
        StringBuilder table = new StringBuilder(TABLE_HEADER);
        for (RankInfo r : ranks) {
            table.append(';').append(r.address())
                    .append('@').append(r.readPort())
                    .append('@').append(r.writePort())
                    .append('@').append(r.rank())
                    .append('@').append(NO_DEBUG_PORT);
        }
        String text = table.toString();
        if (text.getBytes(StandardCharsets.UTF_8).length > MAX_TABLE_BYTES) {
            throw new IllegalStateException("MPJ's peer table for " + ranks.length
                    + " ranks exceeds writeUTF's 65535-byte limit; niodev cannot start this many ranks");
        }
        return text;
    }

    public static void writePeerTable(DataOutputStream out, String table) throws IOException {
        out.writeUTF(table);
        out.flush();
    }

    /** The inline configuration niodev's init parses in place of a conf file. */
    public static String inlineConf(int size, int protocolSwitchLimit, String serverHost, int serverPort) {
        return "#Number of Processes;" + size + ";#Protocol Switch Limit;" + protocolSwitchLimit
                + ";#Server Name;" + serverHost + ";#Server Port;" + serverPort;
    }
}
