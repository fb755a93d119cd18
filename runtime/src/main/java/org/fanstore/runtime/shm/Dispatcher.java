package org.fanstore.runtime.shm;

import static org.fanstore.runtime.timing.Timing.*;
import static org.fanstore.runtime.shm.ControlFileDescriptor.*;

import java.util.concurrent.atomic.AtomicIntegerArray;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

/**
 * The server's only loop: drain the ring, hand requests to the handler, keep the heartbeat, sweep dead slots,
 * unblock a ring whose producer died mid-record. When the ring is empty it spins briefly, then sleeps on the
 * doorbell futex for at most {@code WAIT_SLICE_NS}: an idle server burns no core.
 * Heartbeat and sweep live on this thread on purpose: the heartbeat then proves the dispatcher (not just the
 * JVM) is alive, and the sweeper's "not in flight" test cannot race a dispatch.
 */
final class Dispatcher implements Runnable, MessageHandler {
    /** Records handled per ring read, so heartbeat and sweeps still happen under a flood. */
    static final int READ_BATCH = 64;
    /** Empty re-reads before sleeping: catches a burst's next request without a futex round trip. */
    static final int SPIN_READS = 100;

    private final ShmServer server;
    private final ControlFile file;
    private final UnsafeBuffer ctl;
    private final ManyToOneRingBuffer ring;
    private final AtomicIntegerArray inFlight;
    private final SlotSweeper sweeper;
    private final RequestHandler handler;
    private final long doorbellAddress;
    private final int maxKeyLength;
    private volatile boolean running = true;

    /** Handler failures logged at most; each is a bug, and the first ones say enough. */
    static final int LOGGED_UNEXPECTED = 10;

    private long lastHeartbeat;
    private int unexpected;
    private long lastSweep;
    private long stuckHead = -1;
    private long stuckSince;

    Dispatcher(final ShmServer server, final ControlFile file, final AtomicIntegerArray inFlight,
        final RequestHandler handler, final ClientLocks clients) {
        this.server = server;
        this.file = file;
        this.ctl = file.buffer;
        this.ring = file.ring;
        this.inFlight = inFlight;
        this.sweeper = new SlotSweeper(file, inFlight, clients);
        this.handler = handler;
        this.doorbellAddress = file.address(DOORBELL_OFFSET);
        this.maxKeyLength = maxRequestLength(file.slotSize) - 1;
    }

    /**
     * Ends the loop within a wake-up. The doorbell moves too: a loop that read it before this point and is about
     * to sleep on it returns at once instead of sleeping out a {@code WAIT_SLICE_NS}
     * (a lost wake-up would hold every job's end for that slice).
     */
    void stop() {
        running = false;
        ctl.getAndAddInt(DOORBELL_OFFSET, 1);
        Futex.wake(doorbellAddress, 1);
    }

    @Override
    public void run() {
        int emptyReads = 0;
        while (running) {
            final long now = System.nanoTime();
            housekeeping(now);
            final int doorbell = ctl.getIntVolatile(DOORBELL_OFFSET);  // read before the ring: no lost wake-up
            if (ring.read(this, READ_BATCH) > 0) {
                emptyReads = 0;
                stuckHead = -1;
                continue;
            }
            if (++emptyReads < SPIN_READS) {
                Thread.onSpinWait();
                continue;
            }
            emptyReads = 0;
            checkStuck(now);
            if (!running) {
                break;  // stopped after the doorbell was read: its bump may predate that read
            }
            Futex.wait(doorbellAddress, doorbell, WAIT_SLICE_NS);
        }
    }

    private void housekeeping(final long now) {
        if (now - lastHeartbeat >= HEARTBEAT_STORE_GAP_NS) {
            // System.nanoTime() is CLOCK_MONOTONIC on Linux HotSpot (checked by HeartbeatClockTest).
            ctl.putLongRelease(HEARTBEAT_OFFSET, now);
            lastHeartbeat = now;
        }
        if (now - lastSweep >= SWEEP_INTERVAL_NS) {
            sweeper.sweep();
            lastSweep = now;
        }
    }

    /** Called with an empty read: if the head has not moved for a while although records wait, unblock. */
    private void checkStuck(final long now) {
        final long head = ring.consumerPosition();
        if (ring.producerPosition() == head) {
            stuckHead = -1;
            return;
        }
        if (head != stuckHead) {
            stuckHead = head;
            stuckSince = now;
        } else if (now - stuckSince >= UNBLOCK_AFTER_NS) {
            ring.unblock();
            stuckHead = -1;
        }
    }

    @Override
    public void onMessage(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length) {
        if (msgTypeId != RING_MSG_OPEN_REQUEST || length != RING_REQUEST_LENGTH) {
            return;  // not ours to interpret; a client never writes these
        }
        final long taken = System.nanoTime();
        final int slot = buffer.getInt(index + RING_REQUEST_SLOT_OFFSET);
        final int sequence = buffer.getInt(index + RING_REQUEST_SEQUENCE_OFFSET);
        if (slot < 0 || slot >= file.slotCount) {
            return;
        }
        inFlight.set(slot, 1);  // before the state check: from here on the sweeper keeps its hands off
        final int state = file.slotState(slot);
        if (state == SLOT_ABANDONED) {
            inFlight.set(slot, 0);
            file.casSlotState(slot, SLOT_ABANDONED, SLOT_FREE);
            return;
        }
        if (state != SLOT_SUBMITTED || file.slotSequence(slot) != sequence) {
            inFlight.set(slot, 0);  // stale record: the slot was swept and maybe reused
            return;
        }
        dispatch(slot, taken);
    }

    private void dispatch(final int slot, final long taken) {
        final SlotResponder responder = new SlotResponder(server, slot);
        final int op = file.slotOp(slot);
        final int keyLength = file.requestKeyLength(slot);
        if (op < OP_OPEN || op > OP_PUBLISH) {
            responder.error(Errno.ENOSYS);
            return;
        }
        if (keyLength < 0 || keyLength > maxKeyLength) {
            responder.error(Errno.ENAMETOOLONG);
            return;
        }
        // The slot's table generation is not read: a job publishes one table and never replaces it.
        final Request request = file.readRequest(slot, keyLength, taken);
        try {
            handler.handle(request, responder);
        } catch (final RuntimeException e) {
            if (++unexpected <= LOGGED_UNEXPECTED) { // a reader's EIO is never silent: logged, up to the cap
                System.err.println("fanstore: a request for " + request.keyString() + " failed inside the runtime ("
                    + (e.getMessage() == null ? "no message; FANSTORE_DEBUG=1 shows where" : e.getMessage())
                    + "); the reader got EIO" + (unexpected == LOGGED_UNEXPECTED ? "; not logging more of these" : ""));
                if (System.getenv("FANSTORE_DEBUG") != null) {
                    e.printStackTrace();
                }
            }
            responder.errorIfUnanswered(Errno.EIO); // after the log line: whoever sees the EIO can find it
        }
    }
}
