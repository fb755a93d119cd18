package org.fanstore.runtime.timing;

import java.time.Duration;

/**
 * Every timing constant of the runtime, in one table: each with the reason for its value in one line. The shim's
 * twin is interpose-native/src/timing.h; TimingOrderTest asserts the orderings that must hold across the two
 * (a bound inside a wait is shorter than the wait around it).
 */
public final class Timing {
    private Timing() {
    }
}
