package org.fanstore.runtime.shm;

import java.util.concurrent.atomic.AtomicBoolean;

/** The responder for one in-flight slot: enforces "exactly once" and hands the answer to the server. */
final class SlotResponder implements Responder {
    private final ShmServer server;
    private final int slot;
    private final AtomicBoolean answered = new AtomicBoolean();

    SlotResponder(final ShmServer server, final int slot) {
        this.server = server;
        this.slot = slot;
    }

    @Override
    public void ok(final byte[] path) {
        claimAnswer();
        server.answer(slot, 0, path);
    }

    @Override
    public void ok(final int result, final byte[] path) {
        if (result < 0) {
            throw new IllegalArgumentException("a success result is >= 0: " + result);
        }
        claimAnswer();
        server.answer(slot, result, path);
    }

    @Override
    public void error(final int errno) {
        if (errno <= 0) {
            throw new IllegalArgumentException("errno must be positive: " + errno);
        }
        claimAnswer();
        server.answer(slot, -errno, null);
    }

    /** Answers EIO unless an answer was already given (used when a handler throws). */
    void errorIfUnanswered(final int errno) {
        if (answered.compareAndSet(false, true)) {
            server.answer(slot, -errno, null);
        }
    }

    private void claimAnswer() {
        if (!answered.compareAndSet(false, true)) {
            throw new IllegalStateException("slot " + slot + " already answered");
        }
    }
}
