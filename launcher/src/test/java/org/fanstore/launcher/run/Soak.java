package org.fanstore.launcher.run;

import org.junit.jupiter.api.Assumptions;

/**
 * {@code FANSTORE_SOAK=1} in the environment: the long soaks and the full matrices (README, "Tests"). Without it each
 * test runs its bounded version, the one CI runs: a matrix keeps the cases that cover each dimension at least once,
 * and says which it leaves to the soak.
 */
public final class Soak {
    /** True when the soak was asked for. */
    public static final boolean ON = "1".equals(System.getenv("FANSTORE_SOAK"));

    private Soak() {
    }

    /** Skips this case unless it belongs to the bounded run or the soak was asked for. */
    public static void orBounded(boolean bounded, String what) {
        Assumptions.assumeTrue(ON || bounded, what + ": soak only (FANSTORE_SOAK=1)");
    }
}
