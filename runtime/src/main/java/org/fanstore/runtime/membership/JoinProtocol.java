package org.fanstore.runtime.membership;

import java.nio.ByteBuffer;

/**
 * fanstore's join protocol between a runtime ({@link RankJoin}) and the job's {@link RendezvousServer}, which
 * replaces niodev's unauthenticated one on the network (README.md). All integers big-endian:
 * <ol>
 *   <li>rank to server, HELLO: {@link #MAGIC}, int rank.</li>
 *   <li>server to rank: {@link #NONCE_BYTES} random bytes.</li>
 *   <li>rank to server, PROOF: HMAC-SHA256(job secret, {@link #PROOF_LABEL}, nonce, rank).</li>
 *   <li>server to rank, once the proof checked: the byte {@link #ACCEPTED}; from here on the rank counts, and a
 *       closed connection is a failure of the job. Before it, the server may drop the connection (it holds at
 *       most {@code MAX_UNPROVEN} unproven ones, oldest dropped first): the rank then simply connects again.</li>
 *   <li>server to rank, once every rank proved itself: the byte {@link #GO}.</li>
 *   <li>rank to server, PORTS: int write port, int read port (niodev's, known once {@code MPI.Init} bound them).</li>
 *   <li>server to rank, once every rank sent its ports: int length, then the niodev peer table in UTF-8.</li>
 * </ol>
 * The server writes nothing before a valid HELLO and drops a connection at the first byte that does not fit.
 */
public final class JoinProtocol {
    /** "FSJ1": a niodev rank's {@code writeUTF("Sending Info")} or any text never starts with it. */
    public static final int MAGIC = 0x46534A31;
    public static final int HELLO_BYTES = 8;
    public static final int NONCE_BYTES = 32;
    public static final int PROOF_BYTES = 32;
    public static final int PORTS_BYTES = 8;
    public static final byte ACCEPTED = 'K';
    public static final byte GO = 'G';
    public static final byte[] PROOF_LABEL = "fanstore-join-1".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private JoinProtocol() {
    }

    public static byte[] hello(int rank) {
        return ByteBuffer.allocate(HELLO_BYTES).putInt(MAGIC).putInt(rank).array();
    }

    /** What rank {@code rank} answers to {@code nonce}; only a holder of the job's secret can compute it. */
    public static byte[] proof(JobSecret secret, byte[] nonce, int rank) {
        return secret.mac(PROOF_LABEL, nonce, ByteBuffer.allocate(4).putInt(rank).array());
    }

    public static byte[] ports(int writePort, int readPort) {
        return ByteBuffer.allocate(PORTS_BYTES).putInt(writePort).putInt(readPort).array();
    }
}
