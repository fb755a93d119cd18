package org.fanstore.runtime;

import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * How tests wait: for a real condition, against a deadline, failing with a message that says what never
 * happened. A bare sleep either wastes time or, on a loaded machine, is too short.
 */
public final class Await {
    /** Pause between two looks at the condition (the only sleep here: polling, not synchronisation). */
    private static final long POLL_MILLIS = 10;

    private Await() {
    }

    /** Returns once {@code condition} holds; fails the test with {@code what} if {@code timeout} passes first. */
    public static void until(final Duration timeout, final BooleanSupplier condition, final String what)
        throws InterruptedException {
        if (!within(timeout, condition)) {
            fail(what + " (waited " + timeout.toMillis() + " ms)");
        }
    }

    /** Whether {@code condition} came to hold before {@code timeout} passed. */
    public static boolean within(final Duration timeout, final BooleanSupplier condition) throws InterruptedException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(POLL_MILLIS);
        }
        return true;
    }
}
