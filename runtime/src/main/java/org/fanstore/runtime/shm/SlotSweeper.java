package org.fanstore.runtime.shm;

import static org.fanstore.runtime.shm.ControlFileDescriptor.*;

import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * Frees slots nobody will ever free otherwise. Runs on the dispatcher thread, so "not in flight" cannot change
 * underneath it (only the dispatcher puts a slot in flight). Rules, each applied with one CAS on the claim word
 * so a slot that moved on in the meantime is left alone:
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

    SlotSweeper(final ControlFile file, final AtomicIntegerArray inFlight) {
        this.file = file;
        this.inFlight = inFlight;
    }

    /** One pass over all slots; returns how many were freed. */
    int sweep() {
        int freed = 0;
        for (int slot = 0; slot < file.slotCount; slot++) {
            final long word = file.claimWord(slot);
            if (reclaimable(slot, word) && file.freeIfUnchanged(slot, word)) {
                freed++;
            }
        }
        return freed;
    }

    private boolean reclaimable(final int slot, final long word) {
        switch (ControlFile.stateOf(word)) {
            case SLOT_CLAIMED:
            case SLOT_DONE:
                return !OwnerLiveness.isAlive(ControlFile.ownerOf(word));
            case SLOT_SUBMITTED:
                return inFlight.get(slot) == 0 && !OwnerLiveness.isAlive(ControlFile.ownerOf(word));
            case SLOT_ABANDONED:
                return inFlight.get(slot) == 0;
            default:
                return false;
        }
    }
}
