package org.fanstore.runtime.fetch;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.fanstore.runtime.liveness.PeerLiveness;
import org.fanstore.runtime.membership.JobSecret;
import org.fanstore.runtime.stats.ServeTimes;
import org.fanstore.runtime.world.BoundedWait;
import org.fanstore.runtime.world.MpiTags;
import org.fanstore.runtime.world.MpiWorld;
import org.fanstore.runtime.world.PackedMessages;
import org.fanstore.runtime.world.Pending;

/**
 * The serving half of remote fetch. One dispatcher thread only receives: it blocks in
 * {@code Recv(ANY_SOURCE, FETCH_REQUEST)} (not an Iprobe loop, which serves fewer requests a second) and hands
 * each request to a small worker pool that reads from the {@link FetchSource} and sends the reply, so a
 * slow disk read or a large reply never delays the next request: readers' requests to one pool, peers' pulls to
 * another whose threads run at the lowest CPU priority (README, "Peers' pulls are served at the lowest CPU
 * priority"). The dispatcher answers no fetch itself, not even a small one: that would save a thread wake-up per
 * fetch, but can stall concurrent fetches (ranks wait on replies that never come), for a reason not yet understood.
 *
 * <p>The dispatcher's receive is the one unbounded wait in this package, on purpose: it is idle waiting,
 * and it ends with the first shutdown request from a peer (every rank sends one to each peer when it stops,
 * after the job's final barrier) or with the process (daemon thread). A rank cannot wake itself: in niodev
 * 0.44 a message a rank sends itself never matches a receive it posted earlier (the Isend completes, the Recv
 * stays blocked), so a self-sent shutdown would leave stop to wait out its join at every job end. A world of one
 * rank has nobody to serve, so it starts no dispatcher.
 *
 * <p>Every request, a shutdown too, must carry the job's {@link JobSecret}: niodev accepts connections from
 * anywhere, and without the check any process that joined a world with this rank could read every file it
 * holds, or stop its serving. A request without it is answered with UNAUTHORIZED alone, sent to the rank MPJ
 * says it came from (not the requester field it claims), and logged with that rank. The check lives here, in
 * front of every {@link FetchSource}, so whatever else comes to be served through this dispatcher is covered.
 */
final class FetchDispatcher {
    private final MpiWorld world;
    private final FetchSource source;
    private final JobSecret secret;
    /** Readers' requests (whole objects, a reader's ranges), at normal priority. */
    private final ExecutorService workers;
    /** Peers' pulls, strangers' refusals and unknown kinds, at the lowest CPU priority (README). */
    private final ExecutorService pulls;
    private final Thread dispatcher;
    private final ThreadLocal<ByteBuffer> buffers = new ThreadLocal<>();
    private volatile Throwable failure;
    private final AtomicInteger refused = new AtomicInteger();
    private volatile ServeTimes serveTimes;

    FetchDispatcher(MpiWorld world, FetchSource source, JobSecret secret, int workerCount) {
        this.world = world;
        this.source = source;
        this.secret = secret;
        this.workers = pool(workerCount, "fanstore-fetch-worker-", false);
        this.pulls = pool(workerCount, "fanstore-pull-server-", true);
        this.dispatcher = new Thread(this::dispatch, "fanstore-fetch-dispatcher");
        this.dispatcher.setDaemon(true);
    }

    /** A fixed pool serving in arrival order; a {@code low} one's threads take the lowest CPU priority first. */
    private ExecutorService pool(int size, String name, boolean low) {
        AtomicInteger n = new AtomicInteger();
        return new ThreadPoolExecutor(size, size, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Runnable body = low ? () -> {
                CpuPriority.lowest(world.rank());
                r.run();
            } : r;
            Thread t = new Thread(body, name + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    void start() {
        if (world.size() > 1) {
            dispatcher.start();
        }
    }

    /**
     * Stops receiving (bounded by {@code timeout}) and lets queued replies finish for the rest of it. Every
     * rank must call it after a barrier that ends all fetching: the shutdown it sends each peer stops that
     * peer's dispatcher, and any one peer's stops this rank's.
     */
    boolean stop(Duration timeout) {
        long deadline = BoundedWait.deadlineAfter(timeout);
        if (world.size() > 1) {
            try {
                wakePeers(deadline); // even when a peer's shutdown already ended ours: that peer waits for ours
                dispatcher.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception | LinkageError e) {
                // the device is gone (a peer died): the daemon dispatcher stays parked until the process exits
            }
        }
        for (ExecutorService pool : new ExecutorService[] {workers, pulls}) {
            pool.shutdown();
        }
        try {
            for (ExecutorService pool : new ExecutorService[] {workers, pulls}) {
                pool.awaitTermination(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        workers.shutdownNow();
        pulls.shutdownNow();
        return !dispatcher.isAlive();
    }

    /** Sends every peer a shutdown request and waits (until deadline) for them to leave. */
    private void wakePeers(long deadline) throws Exception {
        tell(FetchProtocol.KIND_SHUTDOWN, PeerLiveness.othersThan(world.rank(), world.size()), deadline);
    }

    /**
     * Sends each of {@code peers} a bare request of {@code kind} (one that no reply answers: a shutdown, a readers'
     * note), carrying the job secret, and waits until {@code deadline} at most for the sends to complete.
     */
    void tell(int kind, int[] peers, long deadline) throws Exception {
        byte[] bare = FetchProtocol.encode(new FetchProtocol.Request(kind, world.rank(), 0, 0, 0, 0, 0), secret);
        Pending[] sent = new Pending[peers.length];
        for (int i = 0; i < peers.length; i++) {
            sent[i] = world.isend(bare, bare.length, peers[i], MpiTags.FETCH_REQUEST);
        }
        for (Pending r : sent) {
            r.until(deadline);
        }
    }

    void timeServing(ServeTimes times) {
        serveTimes = times;
    }

    /** Why the dispatcher stopped on its own, or null. */
    Throwable failure() {
        return failure;
    }

    private void dispatch() {
        try {
            while (true) {
                byte[] raw = new byte[FetchProtocol.REQUEST_BYTES];
                int from = world.receiveFromAny(raw, MpiTags.FETCH_REQUEST);
                FetchProtocol.Request request = FetchProtocol.decode(raw);
                if (!FetchProtocol.authentic(raw, secret)) {
                    pulls.execute(() -> refuseStranger(from, request));
                    continue;
                }
                if (request.kind() == FetchProtocol.KIND_SHUTDOWN) {
                    return;
                }
                boolean reader = request.kind() == FetchProtocol.KIND_FETCH_FOR_READER
                        || request.kind() == FetchProtocol.KIND_FETCH_WHOLE;
                long received = System.nanoTime();
                (reader ? workers : pulls).execute(() -> {
                    long started = System.nanoTime();
                    long firstSent = serve(request);
                    ServeTimes times = serveTimes;
                    if (reader && times != null && firstSent != 0) {
                        times.readerServed(started - received, firstSent - started);
                    }
                });
            }
        } catch (Throwable t) {
            failure = t;
        }
    }

    /** Answers one request; returns when its first reply message had left ({@link System#nanoTime()}), or 0. */
    private long serve(FetchProtocol.Request r) {
        try {
            boolean whole = r.kind() == FetchProtocol.KIND_FETCH_WHOLE;
            if ((r.kind() != FetchProtocol.KIND_FETCH && r.kind() != FetchProtocol.KIND_FETCH_FOR_READER && !whole)
                    || r.chunkBytes() < 1 || r.chunkBytes() > FetchProtocol.MAX_CHUNK_BYTES
                    || r.position() < 0 || r.length() < 0) {
                refuse(r, RemoteFetchException.Reason.BAD_REQUEST, -1);
                return 0;
            }
            long objectLength;
            try {
                objectLength = source.length(r.id());
            } catch (IOException e) {
                refuse(r, RemoteFetchException.Reason.READ_FAILED, -1);
                return 0;
            }
            if (objectLength == FetchSource.NOT_HELD || r.position() <= objectLength
                    && r.length() <= objectLength - r.position() && !source.holds(r.id(), r.position(), r.length(),
                    r.kind() != FetchProtocol.KIND_FETCH)) {
                // a partition it fills: its length says "not yet" (README, the status table); else -1, "not here"
                refuse(r, RemoteFetchException.Reason.NOT_HELD, objectLength);
                return 0;
            }
            if (r.position() > objectLength || r.length() > objectLength - r.position()
                    || (whole && r.position() + r.length() != objectLength)) {
                refuse(r, RemoteFetchException.Reason.BAD_RANGE, objectLength);
                return 0;
            }
            return sendData(r, objectLength);
        } catch (Exception | LinkageError e) {
            // MPJ failed to send (the requester or the device is gone): the requester's deadline reports it
            return 0;
        }
    }

    /**
     * Sends the data in chunks, one message in flight at a time. Overlapping the next chunk's read with the
     * previous Isend (two rendezvous sends outstanding on one tag) gains nothing and is suspected of stalling
     * niodev, so a chunk's read waits for the previous send.
     */
    private long sendData(FetchProtocol.Request r, long objectLength) throws Exception {
        ByteBuffer buffer = buffer(r.chunkBytes());
        int base = PackedMessages.sendOffset();
        int header = FetchProtocol.REPLY_HEADER_BYTES;
        long sent = 0;
        long firstSent = 0;
        boolean first = true;
        while (first || sent < r.length()) {
            int start = first ? header : 0;   // after base: niodev's header room (PackedMessages)
            int n = (int) Math.min(r.length() - sent, r.chunkBytes());
            try {
                if (n > 0) {
                    source.read(r.id(), r.position() + sent, PackedMessages.slice(buffer, base + start, n));
                }
            } catch (IOException e) {
                if (first) {
                    refuse(r, RemoteFetchException.Reason.READ_FAILED, objectLength);
                }
                // mid-transfer the requester cannot be told (its buffers await data): it times out instead
                return 0;
            }
            if (first) {
                FetchProtocol.putHeader(buffer, base, FetchProtocol.STATUS_OK, objectLength, r.length());
            }
            send(r, buffer, start + n);
            if (first) {
                firstSent = System.nanoTime();
            }
            sent += n;
            first = false;
        }
        return firstSent;
    }

    /** Logs (the first few, then every 1000th: a flood must not fill the log) and answers UNAUTHORIZED alone. */
    private void refuseStranger(int source, FetchProtocol.Request claimed) {
        int n = refused.incrementAndGet();
        if (n <= 10 || n % 1000 == 0) {
            System.err.println("fanstore rank " + world.rank() + ": refused a fetch request from rank " + source
                    + " without this job's secret (" + n + " so far); is another job or user reaching this rank?");
        }
        try {
            FetchProtocol.Request answer = new FetchProtocol.Request(claimed.kind(), source, claimed.replyTag(),
                    claimed.chunkBytes(), claimed.id(), claimed.position(), claimed.length());
            refuse(answer, RemoteFetchException.Reason.UNAUTHORIZED, -1);
        } catch (Exception | LinkageError e) {
            // the stranger is gone or never listened: nothing it should get anyway
        }
    }

    private void refuse(FetchProtocol.Request r, RemoteFetchException.Reason reason, long objectLength)
            throws Exception {
        // this thread's buffer, not a new direct one: a flood of strangers' requests must not churn off-heap memory
        ByteBuffer header = buffer(0);
        FetchProtocol.putHeader(header, PackedMessages.sendOffset(), FetchProtocol.statusOf(reason), objectLength, 0);
        send(r, header, FetchProtocol.REPLY_HEADER_BYTES);
    }

    /** Sends {@code length} bytes of {@code message} from {@link PackedMessages#sendOffset()}. */
    private void send(FetchProtocol.Request r, ByteBuffer message, int length) throws Exception {
        awaitSent(r, world.isendPacked(message, length, r.requester(), r.replyTag()));
    }

    private void awaitSent(FetchProtocol.Request r, Pending sending) throws Exception {
        if (!sending.until(BoundedWait.deadlineAfter(REPLY_TIMEOUT))) {
            buffers.remove(); // MPJ may still read this buffer; never reuse it
            throw new IOException("reply to rank " + r.requester() + " stuck for " + REPLY_TIMEOUT.toSeconds() + " s");
        }
    }

    /**
     * This thread's direct buffer (PackedMessages) for a header and one chunk of {@code chunkBytes} (the request's),
     * grown when a request asks for larger chunks. Sized by the request, not by {@link FetchProtocol#MAX_CHUNK_BYTES}:
     * eight serving threads with 8 MiB each would hold 64 MiB (and direct, not heap arrays: those would fill a fresh
     * runtime's young generation and pause each JVM for a collection in the first epoch).
     */
    private ByteBuffer buffer(int chunkBytes) {
        int needed = FetchProtocol.REPLY_HEADER_BYTES + chunkBytes;
        ByteBuffer b = buffers.get();
        if (b == null || b.capacity() < PackedMessages.sendOffset() + needed) {
            b = PackedMessages.forSending(needed);
            buffers.set(b);
        }
        return b;
    }
}
