package org.fanstore.runtime.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/**
 * The nice value is per thread on Linux: the kernel's own view (/proc/self/task/TID/stat) must show the lowered
 * thread at {@link BackgroundPriority#NICE} and the thread beside it unchanged, or background pulls would either
 * not yield or drag the whole runtime down with them.
 */
class BackgroundPriorityTest {
    /** Field 19 of /proc/self/task/TID/stat (after the parenthesised command name, which may hold spaces). */
    private static int niceOf(int tid) throws Exception {
        String stat = Files.readString(Path.of("/proc/self/task/" + tid + "/stat"));
        String[] rest = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Integer.parseInt(rest[16]);
    }

    @Test
    void lowersOnlyTheCallingThread() throws Exception {
        int before = niceOf(NativeCalls.LIBC.gettid());
        AtomicInteger lowered = new AtomicInteger(Integer.MIN_VALUE);
        AtomicInteger tid = new AtomicInteger();
        Thread t = new Thread(() -> {
            tid.set(NativeCalls.LIBC.gettid());
            if (BackgroundPriority.lowerCurrentThread()) {
                try {
                    lowered.set(niceOf(tid.get()));
                } catch (Exception e) {
                    lowered.set(Integer.MAX_VALUE);
                }
            }
        });
        t.start();
        t.join(10_000);
        assertEquals(Math.min(19, before + BackgroundPriority.NICE), lowered.get(), "nice of the lowered thread");
        assertEquals(before, niceOf(NativeCalls.LIBC.gettid()), "the calling test thread keeps its nice value");
        assertTrue(tid.get() != NativeCalls.LIBC.gettid());
    }
}
