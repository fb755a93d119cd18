package org.fanstore.runtime.world;

/**
 * A send, receive or collective asked of a world this rank has left after a node was lost ({@link MpiWorld#leave}):
 * thrown at once, without entering MPJ, whose device is unusable then (liveness/README.md, "A node lost after
 * ready"). A RuntimeException, as MPJ's own failures are, so every caller's MPJ failure path handles it.
 */
public final class WorldLeftException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    WorldLeftException(String why) {
        super(why);
    }
}
