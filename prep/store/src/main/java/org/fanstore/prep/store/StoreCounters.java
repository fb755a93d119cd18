package org.fanstore.prep.store;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** Requests and bytes of one {@link ObjectStore}, for the job's statistics. Thread-safe; LongAdders, no lock. */
public final class StoreCounters {
    /** Request kinds as S3 bills them. */
    public enum Kind {
        HEAD, GET, PUT, LIST, DELETE, MULTIPART
    }

    private final Map<Kind, LongAdder> requests = new EnumMap<>(Kind.class);
    private final LongAdder bytesIn = new LongAdder();
    private final LongAdder bytesOut = new LongAdder();
    private final LongAdder resumes = new LongAdder();
    /** System.nanoTime() of the store's last answer (a response's headers, any status, or body bytes). */
    private volatile long lastAnswer = System.nanoTime() - Long.MAX_VALUE / 4;

    StoreCounters() {
        for (Kind k : Kind.values()) {
            requests.put(k, new LongAdder());
        }
    }

    void request(Kind kind) {
        requests.get(kind).increment();
    }

    void bytesIn(long n) {
        bytesIn.add(n);
        lastAnswer = System.nanoTime();
    }

    void answered() {
        lastAnswer = System.nanoTime();
    }

    /**
     * When the store last answered anything (System.nanoTime()): a response's headers of any status, or body bytes.
     * A read that got nothing since it began, while this stayed older, met a store that stopped answering.
     */
    public long lastAnswerNanos() {
        return lastAnswer;
    }

    void bytesOut(long n) {
        bytesOut.add(n);
    }

    void resume() {
        resumes.increment();
    }

    /** Requests of one kind issued (each counted once, whatever the SDK's retries). */
    public long requests(Kind kind) {
        return requests.get(kind).sum();
    }

    /** All requests issued. */
    public long requests() {
        long n = 0;
        for (LongAdder a : requests.values()) {
            n += a.sum();
        }
        return n;
    }

    /** Body bytes received (GET). */
    public long bytesIn() {
        return bytesIn.sum();
    }

    /** Body bytes sent (PUT, upload parts). */
    public long bytesOut() {
        return bytesOut.sum();
    }

    /** Bodies that broke mid-way and were continued with a new GET. */
    public long resumes() {
        return resumes.sum();
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder();
        for (Kind k : Kind.values()) {
            s.append(k.name().toLowerCase(java.util.Locale.ROOT)).append('=').append(requests(k)).append(' ');
        }
        return s.append("bytes_in=").append(bytesIn()).append(" bytes_out=").append(bytesOut())
                .append(" resumes=").append(resumes()).toString();
    }
}
