package org.fanstore.runtime.shm;

/**
 * Answers one request, exactly once, from any thread. Answering a request whose client gave up (timed out or
 * died) frees its slot; answering after the server closed does nothing.
 */
public interface Responder {
    /** Success: {@code path} (no NUL) is the file the client opens. Too long for the slot becomes ENAMETOOLONG. */
    void ok(byte[] path);

    /** Success with a result other than 0 and a path (may be null). */
    void ok(int result, byte[] path);

    /** Failure with a positive errno (see {@link Errno}). */
    void error(int errno);
}
