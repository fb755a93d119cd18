package org.fanstore.runtime.shm;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The test server's behaviour, shared with wire_test_client.c: key K is answered "/tmp/answer/" + K; keys
 * starting "missing" get ENOENT; "slow" keys are answered after {@link #SLOW_MILLIS}; "hang" keys are held
 * until the test takes them with {@link #takeHeld}. Answers come inline or from a worker pool.
 */
final class EchoHandler implements RequestHandler, AutoCloseable {
    static final String ANSWER_PREFIX = "/tmp/answer/";
    static final long SLOW_MILLIS = 200;

    private final ExecutorService workers;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final BlockingQueue<Responder> held = new LinkedBlockingQueue<>();
    final AtomicInteger slowPending = new AtomicInteger();
    final AtomicInteger fastWhileSlowPending = new AtomicInteger();

    /** @param workerThreads 0 answers on the dispatcher thread, otherwise on a pool of that size */
    EchoHandler(final int workerThreads) {
        this.workers = workerThreads == 0 ? null : Executors.newFixedThreadPool(workerThreads);
    }

    static byte[] answerFor(final String key) {
        return (ANSWER_PREFIX + key).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void handle(final Request request, final Responder responder) {
        final String key = request.keyString();
        if (key.startsWith("broken")) {
            throw new IllegalStateException("echo handler broken on purpose for " + key);
        } else if (key.startsWith("hang")) {
            held.add(responder);
        } else if (key.startsWith("slow")) {
            slowPending.incrementAndGet();
            timer.schedule(() -> {
                slowPending.decrementAndGet();
                responder.ok(answerFor(key));
            }, SLOW_MILLIS, TimeUnit.MILLISECONDS);
        } else if (workers == null) {
            answer(key, responder);
        } else {
            workers.execute(() -> answer(key, responder));
        }
    }

    private void answer(final String key, final Responder responder) {
        if (key.startsWith("missing")) {
            responder.error(Errno.ENOENT);
            return;
        }
        if (slowPending.get() > 0) {
            fastWhileSlowPending.incrementAndGet();
        }
        responder.ok(answerFor(key));
    }

    /** The next held ("hang") request's responder, or null after the timeout. */
    Responder takeHeld(final long timeoutMillis) throws InterruptedException {
        return held.poll(timeoutMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        timer.shutdownNow();
        if (workers != null) {
            workers.shutdownNow();
        }
    }
}
