package org.fanstore.runtime.world;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * After this rank left the world (a node was lost): releases threads parked inside MPJ's {@code Isend}. niodev's
 * {@code NIODevice.isend} takes the destination channel's write semaphore ({@code writeLockTable}) and does not give
 * it back when the write throws, which it does on every channel once a peer died; the next send to that peer then
 * waits forever (liveness/README.md, "A node lost after ready"). Every {@code UNJAM_MILLIS} this daemon signals each
 * such semaphore found at 0: the parked send goes on, throws on the closed channel, and its caller's bounded failure
 * path runs. Started only after a loss; ends with the process.
 */
final class WorldLeft {
    static final long UNJAM_MILLIS = 100;

    private WorldLeft() {
    }

    /** Starts the unjammer; does nothing (and says why on stderr) when the device is not the niodev it knows. */
    static void startUnjammer(int rank) {
        List<Object> semaphores;
        Field count;
        Method signal;
        try {
            Object table = RankJoin.field(RankJoin.niodev(), "writeLockTable");
            semaphores = new ArrayList<>(((Map<?, ?>) table).values());
            if (semaphores.isEmpty()) {
                return;
            }
            Class<?> type = semaphores.get(0).getClass();
            count = type.getDeclaredField("s");
            count.setAccessible(true);
            signal = type.getDeclaredMethod("signal");
            signal.setAccessible(true);
        } catch (ReflectiveOperationException | RuntimeException e) {
            System.err.println("fanstore rank " + rank + ": cannot release sends parked in MPJ (" + e.getMessage()
                    + "); a thread sending to a peer when the node was lost may wait until the job ends");
            return;
        }
        Thread t = new Thread(() -> {
            while (true) {
                for (Object sem : semaphores) {
                    try {
                        synchronized (sem) {  // the semaphore's own monitor, as its acquire and signal use
                            if (count.getInt(sem) == 0) {
                                signal.invoke(sem);
                            }
                        }
                    } catch (ReflectiveOperationException e) {
                        return;
                    }
                }
                try {
                    Thread.sleep(UNJAM_MILLIS);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "fanstore-mpj-unjam");
        t.setDaemon(true);
        t.start();
    }
}
