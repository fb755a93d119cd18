package org.fanstore.runtime.shm;

import static org.fanstore.runtime.shm.ControlFileDescriptor.*;

import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * Frees slots nobody will ever free otherwise. An owner is dead when its lock on the slot's byte of
 * {@code <ctl>.clients} is gone ({@link ClientLocks}), whatever its pid says. Runs on the dispatcher thread, so
 * "not in flight" cannot change underneath it (only the dispatcher puts a slot in flight). Rules, each applied
 * with one CAS on the claim word so a slot that moved on in the meantime is left alone:
 * <ul>
 * <li>CLAIMED or DONE, owner dead: the owner would have submitted or freed it.</li>
 * <li>SUBMITTED, owner dead, not in flight: any ring record for it is ignored later (state/sequence check).</li>
 * <li>ABANDONED, not in flight: the client gave up; a later record for it is ignored the same way.</li>
 * </ul>
 * A SUBMITTED or ABANDONED slot in flight is freed by its answer instead (see {@link SlotResponder}).
 */
final class SlotSweeper {
    private final ControlFile file;
    private final AtomicIntegerArray inFlight;
    private final ClientLocks clients;

    SlotSweeper(final ControlFile file, final AtomicIntegerArray inFlight, final ClientLocks clients) {
        this.file = file;
        this.inFlight = inFlight;
        this.clients = clients;
    }

    /** One pass over all slots; returns how many were freed. */
    int sweep() {
        int freed = 0;
        for (int slot = 0; slot < file.slotCount; slot++) {
            final long word = file.claimWord(slot);
            switch (ControlFile.stateOf(word)) {
                case SLOT_CLAIMED:
                case SLOT_DONE:
                    freed += freeIfOwnerDead(slot, word);
                    break;
                case SLOT_SUBMITTED:
                    freed += inFlight.get(slot) == 0 ? freeIfOwnerDead(slot, word) : 0;
                    break;
                case SLOT_ABANDONED:
                    freed += inFlight.get(slot) == 0 && file.freeIfUnchanged(slot, word) ? 1 : 0;
                    break;
                default:
                    break;
            }
        }
        return freed;
    }

    /**
     * The owner is dead iff no client holds the slot's byte of {@code <ctl>.clients} (never its pid: a client in
     * another PID namespace has a pid that means nothing here). The CAS runs while the sweeper holds that byte, so
     * no client can claim the slot in between: a word still equal to {@code seen} is the dead owner's.
     */
    private int freeIfOwnerDead(final int slot, final long seen) {
        if (!clients.tryHold(slot)) {
            return 0;
        }
        try {
            return file.freeIfUnchanged(slot, seen) ? 1 : 0;
        } finally {
            clients.release(slot);
        }
    }
}
