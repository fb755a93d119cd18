package org.fanstore.runtime.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.fanstore.runtime.Await;
import org.fanstore.runtime.world.RankProcesses;
import org.fanstore.runtime.shm.ShmTestSupport.Finished;
import org.junit.jupiter.api.Test;

/** Failures on either side: dead clients, a dead producer inside the ring, a dead server, and idleness. */
class ShmRecoveryTest extends ShmServerFixture {
    private static final int SLOTS = 16;
    private static final int SLOT_SIZE = 1024;
    private static final int RING = 4096;
    /** Sweeps run every second; allow one full interval plus scheduling slack. */
    private static final Duration RECLAIM = Duration.ofMillis(2_500);
    private static final long CLIENT_TIMEOUT_S = 60;


    private void serve() throws Exception {
        handler = new EchoHandler(1);
        server = ShmServer.create(ctl, SLOTS, SLOT_SIZE, RING, handler, true);
    }

    private void assertStillServes() throws Exception {
        final Finished done = ShmTestSupport.run(CLIENT_TIMEOUT_S, "check", ctl.toString(), "2", "100", "after");
        assertEquals(0, done.exitCode(), done.output());
    }

    @Test
    void aClientKilledMidRequestHasItsSlotReclaimed() throws Exception {
        serve();
        final Process client = ShmTestSupport.startClient("hang", ctl.toString(), "hang-killed");
        final Responder held = handler.takeHeld(10_000);
        assertNotNull(held, "request never arrived");
        assertEquals(SLOTS - 1, server.freeSlotCount());
        client.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        held.ok(EchoHandler.answerFor("hang-killed"));  // DONE for a dead owner: only the sweeper can free it
        Await.until(RECLAIM, () -> server.freeSlotCount() == SLOTS, "slot not reclaimed");
        assertStillServes();
    }

    @Test
    void aForkedChildClaimsWithItsOwnPidSoItsSlotIsReclaimedWhileTheParentLives() throws Exception {
        serve();
        final Process parent = ShmTestSupport.startClient("forkhang", ctl.toString(), "hang-child");
        try {
            final String line = new BufferedReader(
                new InputStreamReader(parent.getInputStream(), StandardCharsets.UTF_8)).readLine();
            assertNotNull(line, "no child line");
            final long childPid = Long.parseLong(line.substring("child ".length()));
            final Responder held = handler.takeHeld(10_000);
            assertNotNull(held, "child request never arrived");
            ProcessHandle.of(childPid).ifPresent(ProcessHandle::destroyForcibly);
            held.ok(EchoHandler.answerFor("hang-child"));
            Await.until(RECLAIM, () -> server.freeSlotCount() == SLOTS,
                "child's slot not reclaimed (claimed with the parent's pid?)");
            assertTrue(parent.isAlive());
        } finally {
            parent.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aSlotClaimedByAProcessThatDiedIsReclaimed() throws Exception {
        serve();
        final Process gone = new ProcessBuilder("true").start();
        gone.waitFor(10, TimeUnit.SECONDS);
        try (RawControlView raw = new RawControlView(ctl)) {
            assertTrue(raw.claim(3, (int)gone.pid()));
            assertEquals(ControlFileDescriptor.SLOT_CLAIMED, raw.state(3));
            Await.until(RECLAIM, () -> raw.state(3) == ControlFileDescriptor.SLOT_FREE,
                "claimed slot of a dead process not reclaimed");
        }
    }

    @Test
    void aSlotWhoseOwnerPidNamesALiveProcessButHoldsNoLockIsReclaimed() throws Exception {
        // A reader in another PID namespace whose pid happens to name a live process here, then died: its lock
        // is gone, so its slot is freed (the /proc test kept it for as long as the unrelated process lived).
        serve();
        try (RawControlView raw = new RawControlView(ctl)) {
            assertTrue(raw.claim(5, (int)ProcessHandle.current().pid()));
            Await.until(RECLAIM, () -> raw.state(5) == ControlFileDescriptor.SLOT_FREE,
                "a slot without its owner's lock kept because the pid names a live process");
        }
    }

    /**
     * A live reader in a PID namespace of its own whose pid there names no process here (the namespace's next pid
     * is set past every host pid): its slot is kept while it lives, however long, and freed once it is killed.
     */
    @Test
    void aLiveClientInAnotherPidNamespaceKeepsItsSlotUntilKilled() throws Exception {
        serve();
        int last = 30_000;
        while (Files.exists(Path.of("/proc", Integer.toString(last + 1)))) {
            last--;
        }
        final Process ns = new ProcessBuilder("unshare", "--pid", "--fork", "--mount-proc", "sh", "-c",
            "echo " + last + " > /proc/sys/kernel/ns_last_pid && { \"$0\" hang \"$1\" hang-ns & wait; }",
            ShmTestSupport.testClient().toString(), ctl.toString()).redirectErrorStream(true).start();
        try {
            final Responder held = handler.takeHeld(10_000);
            assertNotNull(held, "request from the namespace never arrived");
            final ProcessHandle client = ns.descendants()
                .filter(p -> p.info().command().orElse("").endsWith("wire_test_client")).findFirst().orElseThrow();
            final int claimedPid = findOwner(SLOTS);
            assertEquals(last + 1, claimedPid, "the claim word holds the namespace's pid");
            assertTrue(!Files.exists(Path.of("/proc", Integer.toString(claimedPid))), "pid visible here");
            signal("STOP", client.pid());  // it cannot take its answer: the slot stays DONE while it lives
            held.ok(EchoHandler.answerFor("hang-ns"));
            Thread.sleep(RECLAIM.toMillis());  // two sweeps and more
            assertEquals(SLOTS - 1, server.freeSlotCount(), "a live client's slot was freed (its pid is invisible)");
            signal("KILL", client.pid());
            Await.until(RECLAIM, () -> server.freeSlotCount() == SLOTS, "a killed client's slot not reclaimed");
            assertStillServes();
        } finally {
            ns.descendants().forEach(ProcessHandle::destroyForcibly);
            ns.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private int findOwner(final int slots) throws Exception {
        try (RawControlView raw = new RawControlView(ctl)) {
            for (int slot = 0; slot < slots; slot++) {
                if (raw.state(slot) != ControlFileDescriptor.SLOT_FREE) {
                    return raw.owner(slot);
                }
            }
        }
        throw new AssertionError("no claimed slot");
    }

    private static void signal(final String name, final long pid) throws Exception {
        assertEquals(0, new ProcessBuilder("kill", "-" + name, Long.toString(pid)).start().waitFor());
    }

    @Test
    void aProducerThatDiedBetweenClaimAndCommitIsUnblocked() throws Exception {
        serve();
        try (RawControlView raw = new RawControlView(ctl)) {
            raw.claimRecordAndDie();
        }
        // The next request sits behind the dead record until the dispatcher unblocks the ring (after ~1 s).
        final Finished first = ShmTestSupport.run(CLIENT_TIMEOUT_S, "expect", ctl.toString(), "behind-dead", "0");
        assertEquals(0, first.exitCode(), first.output());
        assertTrue(first.field("elapsed_ms") < 5_000, first.output());
        assertStillServes();
    }

    @Test
    void aKilledServerTurnsAWaitingRequestIntoEioWithinFiveSeconds() throws Exception {
        final List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(RankProcesses.runtimeJvmFlags());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"),
            ShmEchoServerMain.class.getName(), ctl.toString(), "60"));
        final Process serverProcess = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            final BufferedReader out = new BufferedReader(
                new InputStreamReader(serverProcess.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("READY", out.readLine());
            final Process client = ShmTestSupport.startClient("expect", ctl.toString(), "hang-orphan", "5");
            assertEquals("HELD", out.readLine());
            serverProcess.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            final Finished done = ShmTestSupport.finish(client, 15);
            assertEquals(0, done.exitCode(), done.output());
            assertTrue(done.field("elapsed_ms") < 5_000, done.output());
        } finally {
            serverProcess.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void anIdleServerBurnsNoCpu() throws Exception {
        serve();
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        final long id = server.dispatcherThread().getId();
        // Past start-up work: the dispatcher has gone to sleep once it uses under 1 ms of CPU between two looks.
        final long[] last = {threads.getThreadCpuTime(id)};
        Await.until(Duration.ofSeconds(10), () -> {
            final long now = threads.getThreadCpuTime(id);
            final boolean settled = now - last[0] < TimeUnit.MILLISECONDS.toNanos(1);
            last[0] = now;
            return settled;
        }, "the dispatcher never settled after start-up");
        final long before = threads.getThreadCpuTime(id);
        Thread.sleep(2_000);  // deliberately lets idle time pass: the CPU used over it is what is measured
        final long usedMillis = TimeUnit.NANOSECONDS.toMillis(threads.getThreadCpuTime(id) - before);
        assertTrue(before >= 0, "thread CPU time unsupported");
        assertTrue(usedMillis < 50, "idle dispatcher used " + usedMillis + " ms CPU in 2 s");
        System.out.println("[idle] dispatcher CPU over 2 s: " + usedMillis + " ms");
    }
}
