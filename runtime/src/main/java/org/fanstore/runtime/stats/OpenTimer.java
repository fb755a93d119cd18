package org.fanstore.runtime.stats;

import org.fanstore.runtime.shm.Responder;

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

    OpenTimer(Responder inner, RankStats stats) {
        this.inner = inner;
        this.stats = stats;
    }

    /** The size of the file asked for (what the reader gets when the open succeeds). */
    public void file(long size) {
        this.fileSize = size;
    }

    /** What this open turned out to be, and the bytes read (local kinds) or fetched (remote) to answer it. */
    public void kind(OpenKind what, long bytesRead) {
        this.kind = what;
        this.bytes = bytesRead;
    }

    @Override
    public void ok(byte[] path) {
        inner.ok(path);
        stats.opened(kind, bytes, fileSize, System.nanoTime() - started);
    }

    @Override
    public void ok(int result, byte[] path) {
        inner.ok(result, path);
        stats.opened(kind, bytes, fileSize, System.nanoTime() - started);
    }

    @Override
    public void error(int errno) {
        inner.error(errno);
        stats.failed(System.nanoTime() - started);
    }
}
