package org.fanstore.launcher.run;

/**
 * The suite's one concurrency: test classes whose time is mostly a timer the product must wait out run in a second
 * thread beside the others, which run one after another as before (launcher/src/test/resources/
 * junit-platform.properties). Such a class is annotated {@code @Execution(ExecutionMode.CONCURRENT)} and
 * {@code @ResourceLock(BesideTheOthers.LOCK)}: the shared lock keeps those classes to one at a time among themselves
 * (at most two test classes ever run at once), and, held by the class, keeps its own methods in order in its thread.
 *
 * <p>What it is for: the suite must stay within 20 minutes on CI's 2 cores; these classes spend most of their wall time
 * waiting (a store paused past the reader's 20 s bound and the home's mark-down, a home throttled to 1 MiB/s, a store
 * throttled past the bound) with the CPU mostly idle: measured alone (2026-12-07, both cores' busy share over each
 * class's run) SharedHomeOnceTest 23 s at 13%, S3SilentStoreTest 53 s at 19%, S3JobFaultsTest 39 s at 38%. What it
 * replaces: nothing (they ran in the one sequence). Classes whose assertions time the product against a CPU-bound
 * threshold (a heartbeat's staleness, a kill's grace: NodeLossTest, FaultsTest) stay in the sequence, however
 * idle they are. How it is checked: the clean-clone suite's time and its result, before and after
 * (docs/decisions/suite-beside.md); a class is only added here with its busy share measured the same way.
 */
public final class BesideTheOthers {
    /** The resource lock the classes beside the sequence share. */
    public static final String LOCK = "fanstore-tests-beside-the-others";

    private BesideTheOthers() {
    }
}
