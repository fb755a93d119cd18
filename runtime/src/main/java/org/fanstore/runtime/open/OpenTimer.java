package org.fanstore.runtime.open;

import org.fanstore.runtime.shm.Responder;
import org.fanstore.runtime.stats.OpenKind;
import org.fanstore.runtime.stats.RankStats;
import org.fanstore.runtime.stats.RemoteStage;

/**
 * Wraps the responder of one shim request: the time from the handler's first look at the request (right after
 * the dispatcher read it from the ring) to the answer is what the reader waited for the runtime. The handler
 * says which kind of open it was, and the bytes it read or fetched for it, before answering; an answer without
 * a kind counts as a cache hit (nothing had to be read).
 */
public final class OpenTimer implements Responder {
    private final Responder inner;
    private final RankStats stats;
    private final long started = System.nanoTime();
    private volatile OpenKind kind = OpenKind.CACHE_HIT;
    private volatile long bytes;
    private volatile long fileSize;
    /** Per {@link RemoteStage}: written by the one worker that serves the request, read when it answers. */
    private final long[] stages = new long[RemoteStage.values().length];

    public OpenTimer(Responder inner, RankStats stats) {
        this.inner = inner;
        this.stats = stats;
        stages[RemoteStage.RING_WAIT.ordinal()] = -1;
    }

    /** The request's time in the shared-memory ring ({@code Request.ringWaitNanos()}; negative: unknown). */
    public void ringWait(long nanos) {
        stages[RemoteStage.RING_WAIT.ordinal()] = nanos < 0 ? -1 : nanos;
    }

    /** The size of the file asked for (what the reader gets when the open succeeds). */
    public void file(long size) {
        this.fileSize = size;
    }

    /** What this open turned out to be, and the bytes read (local kinds) or fetched (remote) to answer it. */
    public OpenTimer kind(OpenKind what, long bytesRead) {
        this.kind = what;
        this.bytes = bytesRead;
        return this;
    }

    /** When the handler first looked at the request ({@link System#nanoTime()}). */
    public long started() {
        return started;
    }

    /** Adds {@code nanos} to stage {@code s} of this open; counted only if the open turns out REMOTE. */
    public void stage(RemoteStage s, long nanos) {
        stages[s.ordinal()] += nanos;
    }

    @Override
    public void ok(byte[] path) {
        long replying = System.nanoTime();
        inner.ok(path);
        answered(replying);
    }

    @Override
    public void ok(int result, byte[] path) {
        long replying = System.nanoTime();
        inner.ok(result, path);
        answered(replying);
    }

    private void answered(long replying) {
        long now = System.nanoTime();
        stats.opened(kind, bytes, fileSize, now - started);
        if (kind == OpenKind.REMOTE) {
            stages[RemoteStage.REPLY.ordinal()] = now - replying;
            stats.remoteStages(stages);
        }
    }

    @Override
    public void error(int errno) {
        inner.error(errno);
        stats.failed(System.nanoTime() - started);
    }
}
