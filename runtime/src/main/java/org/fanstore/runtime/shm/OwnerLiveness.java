package org.fanstore.runtime.shm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether a client process still exists, read from /proc/&lt;pid&gt;/stat. A zombie counts as dead: it will
 * never touch its slot again, and its parent may be slow to reap it. (A recycled pid looks alive; the slot is
 * then reclaimed once that process exits too.)
 */
public final class OwnerLiveness {
    private static final char ZOMBIE = 'Z';
    private static final char DEAD = 'X';

    private OwnerLiveness() {
    }

    public static boolean isAlive(final int pid) {
        if (pid <= 0) {
            return false;
        }
        final String stat;
        try {
            stat = Files.readString(Path.of("/proc", Integer.toString(pid), "stat"));
        } catch (final IOException e) {
            return false;  // no such process
        }
        // Format "pid (comm) S ...": comm may contain spaces and parentheses, the state follows the last ')'.
        final int close = stat.lastIndexOf(')');
        if (close < 0 || close + 2 >= stat.length()) {
            return true;  // unreadable format: never reclaim on a guess
        }
        final char state = stat.charAt(close + 2);
        return state != ZOMBIE && state != DEAD;
    }
}
