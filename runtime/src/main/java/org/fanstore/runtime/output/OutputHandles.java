package org.fanstore.runtime.output;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntPredicate;

/**
 * Output files being written on this node: each handle is one staging file and the set of processes that hold a
 * descriptor on it (the creator, plus fork children the shim reports). A handle ends in one of two ways:
 * its last holder releases it (it is committed), or its last holder dies without releasing (killed: it is
 * abandoned and its staging file deleted, so a half-written file is never published). A holder that dies while
 * others still hold the handle (a worker that ended with _exit) simply stops counting. Thread-safe.
 */
final class OutputHandles {
    /** One file being written. */
    record Handle(int id, byte[] key, int mode, boolean exclusive) {
    }

    private final Map<Integer, Handle> handles = new HashMap<>();
    private final Map<Integer, Set<Integer>> holders = new HashMap<>();
    /** Pids that released a handle: a fork child may release before its parent's HOLD for it arrives. */
    private final Map<Integer, Set<Integer>> released = new HashMap<>();
    private int nextId = 1;

    synchronized Handle open(final byte[] key, final int mode, final boolean exclusive, final int pid) {
        final Handle h = new Handle(nextId++, key, mode, exclusive);
        handles.put(h.id(), h);
        holders.computeIfAbsent(h.id(), i -> new HashSet<>()).add(pid);
        return h;
    }

    /** A process holds the handle too; false when the handle is unknown (already ended). */
    synchronized boolean hold(final int id, final int pid) {
        final Set<Integer> set = holders.get(id);
        if (set == null) {
            return false;
        }
        if (!released.getOrDefault(id, Set.of()).contains(pid)) {
            set.add(pid);
        }
        return true;
    }

    /** pid releases the handle: the handle when that was the last holder (the caller commits it), else null. */
    synchronized Handle release(final int id, final int pid) {
        final Set<Integer> set = holders.get(id);
        if (set == null) {
            return null;
        }
        set.remove(pid);
        released.computeIfAbsent(id, i -> new HashSet<>()).add(pid);
        if (!set.isEmpty()) {
            return null;
        }
        holders.remove(id);
        released.remove(id);
        return handles.remove(id);
    }

    /** Drops holders that are gone; returns the handles whose last holder died (the caller deletes them). */
    synchronized List<Handle> sweep(final IntPredicate alive) {
        final List<Handle> dead = new ArrayList<>();
        for (final var it = holders.entrySet().iterator(); it.hasNext();) {
            final var e = it.next();
            e.getValue().removeIf(pid -> !alive.test(pid));
            if (e.getValue().isEmpty()) {
                it.remove();
                released.remove(e.getKey());
                dead.add(handles.remove(e.getKey()));
            }
        }
        return dead;
    }

    /** Handles still open (for the end-of-job report). */
    synchronized List<Handle> open() {
        return new ArrayList<>(handles.values());
    }
}
