package org.fanstore.runtime.liveness;

import java.io.IOException;
import java.util.Arrays;

/**
 * One or more ranks stopped answering (process died, node lost, or the MPJ device closed after a peer
 * died). Carries the ranks so the runtime can report them and the launcher can name them on exit.
 * After this exception the MPJ world is unusable: niodev closes every channel when any peer goes away.
 */
public final class RankFailedException extends IOException {
    private static final long serialVersionUID = 1L;

    private final int[] ranks;

    public RankFailedException(int[] ranks, String message) {
        super(message);
        this.ranks = ranks.clone();
    }

    public RankFailedException(int[] ranks, String message, Throwable cause) {
        super(message, cause);
        this.ranks = ranks.clone();
    }

    /** The ranks held responsible, ascending; never empty. */
    public int[] ranks() {
        return ranks.clone();
    }

    public static String describe(int[] ranks) {
        return ranks.length == 1 ? "rank " + ranks[0] : "ranks " + Arrays.toString(ranks);
    }

    /**
     * A rank's log line: "fanstore rank R: " and {@code text}, without the "rank R: " this exception's messages
     * start with (they name the rank that saw the failure, which the prefix already does).
     */
    public static String logLine(int rank, String text) {
        String self = "rank " + rank + ": ";
        return "fanstore " + self + (text.startsWith(self) ? text.substring(self.length()) : text);
    }
}
