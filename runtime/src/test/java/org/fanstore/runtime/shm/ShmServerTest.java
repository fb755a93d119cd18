package org.fanstore.runtime.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.fanstore.runtime.Await;
import org.fanstore.runtime.shm.ShmTestSupport.Finished;
import org.junit.jupiter.api.Test;

/** Real C client processes (wire_test_client) against an in-JVM server over a /dev/shm control file. */
class ShmServerTest extends ShmServerFixture {
    static final int SLOTS = 64;
    static final int SLOT_SIZE = 1024;
    static final int RING = 16 * 1024;
    private static final long CLIENT_TIMEOUT_S = 120;


    private void serve(final int workerThreads) throws Exception {
        handler = new EchoHandler(workerThreads);
        server = ShmServer.create(ctl, SLOTS, SLOT_SIZE, RING, handler, true);
    }

    @Test
    void threeProcessesOfFourThreadsGetEveryAnswerRight() throws Exception {
        serve(0);
        final List<Process> clients = new ArrayList<>();
        for (int p = 0; p < 3; p++) {
            clients.add(ShmTestSupport.startClient("check", ctl.toString(), "4", "2000", "proc" + p));
        }
        for (final Process client : clients) {
            final Finished done = ShmTestSupport.finish(client, CLIENT_TIMEOUT_S);
            assertEquals(0, done.exitCode(), done.output());
            assertEquals(8000, done.field("ok"), done.output());
        }
        assertEquals(SLOTS, server.freeSlotCount());
    }

    @Test
    void workerPoolAnswersFastRequestsWhileSlowOnesAreStillPending() throws Exception {
        serve(2);
        final Process slowA = ShmTestSupport.startClient("expect", ctl.toString(), "slow-a", "0");
        final Process slowB = ShmTestSupport.startClient("expect", ctl.toString(), "slow-b", "0");
        Await.until(Duration.ofSeconds(5), () -> handler.slowPending.get() > 0, "slow request never arrived");
        final Finished fast = ShmTestSupport.run(CLIENT_TIMEOUT_S, "check", ctl.toString(), "2", "500", "fast");
        assertEquals(0, fast.exitCode(), fast.output());
        for (final Process slow : List.of(slowA, slowB)) {
            final Finished done = ShmTestSupport.finish(slow, CLIENT_TIMEOUT_S);
            assertEquals(0, done.exitCode(), done.output());
            assertTrue(done.field("elapsed_ms") >= EchoHandler.SLOW_MILLIS, done.output());
        }
        assertTrue(handler.fastWhileSlowPending.get() > 0, "no fast answer overtook a slow one");
    }

    @Test
    void handlerErrorArrivesAsThatErrno() throws Exception {
        serve(1);
        final Finished done = ShmTestSupport.run(CLIENT_TIMEOUT_S, "expect", ctl.toString(), "missing-file",
            Integer.toString(Errno.ENOENT));
        assertEquals(0, done.exitCode(), done.output());
        assertEquals(-Errno.ENOENT, done.field("rc"));
    }

    @Test
    void aHandlerFailingUnexpectedlyAnswersEioAndSaysSoOnStderr() throws Exception {
        serve(0);
        final java.io.PrintStream stderr = System.err;
        final java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            final Finished done = ShmTestSupport.run(CLIENT_TIMEOUT_S, "expect", ctl.toString(), "broken-1",
                Integer.toString(Errno.EIO));
            assertEquals(0, done.exitCode(), done.output());
            assertEquals(-Errno.EIO, done.field("rc"));
        } finally {
            System.setErr(stderr);
        }
        final String log = captured.toString(java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(log.contains("a request for broken-1 failed inside the runtime (echo handler broken on purpose"
            + " for broken-1); the reader got EIO"), log);
    }

    @Test
    void unknownOpIsAnsweredEnosysByTheServerItself() throws Exception {
        serve(0);
        try (RawControlView raw = new RawControlView(ctl)) {
            assertTrue(raw.claimHoldingLock(0, (int)ProcessHandle.current().pid()));
            raw.submit(0, 99, "any-key");
            assertEquals(ControlFileDescriptor.SLOT_DONE, raw.awaitAnswer(0, 5_000));
            assertEquals(-Errno.ENOSYS, raw.result(0));
        }
    }

    @Test
    void closingTheServerFailsAWaitingClientWithEio() throws Exception {
        serve(0);
        final Process client = ShmTestSupport.startClient("expect", ctl.toString(), "hang-close", "5");
        assertNotNull(handler.takeHeld(10_000), "request never arrived");
        server.close();
        final Finished done = ShmTestSupport.finish(client, 10);
        assertEquals(0, done.exitCode(), done.output());
        assertTrue(done.field("elapsed_ms") < 5_000, done.output());
    }

    @Test
    void anAnswerLongerThanTheSlotBecomesEnametoolong() throws Exception {
        handler = new EchoHandler(0);
        server = ShmServer.create(ctl, SLOTS, SLOT_SIZE, RING,
            (request, responder) -> responder.ok(new byte[SLOT_SIZE]), true);
        final Finished done = ShmTestSupport.run(CLIENT_TIMEOUT_S, "expect", ctl.toString(), "big", "36");
        assertEquals(0, done.exitCode(), done.output());
    }
}
