package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * How these tests wait: for a real condition, against a deadline, failing with a message that says what never
 * happened. (The runtime's tests have the same helper; launcher tests do not see the runtime's test classes.)
 */
final class Await {
    /** Pause between two looks at the condition (the only sleep here: polling, not synchronisation). */
    private static final long POLL_MILLIS = 50;

    private Await() {
    }

    /** Returns once {@code condition} holds; fails the test with {@code what} if {@code timeout} passes first. */
    static void until(Duration timeout, BooleanSupplier condition, String what) throws InterruptedException {
        if (!within(timeout, condition)) {
            fail(what + " (waited " + timeout.toMillis() + " ms)");
        }
    }

    /** Whether {@code condition} came to hold before {@code timeout} passed. */
    static boolean within(Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(POLL_MILLIS);
        }
        return true;
    }
}
