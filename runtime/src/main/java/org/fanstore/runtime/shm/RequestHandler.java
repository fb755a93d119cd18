package org.fanstore.runtime.shm;

/**
 * The runtime's side of a request. Called on the dispatcher thread: it must not block; slow work (decompress,
 * remote fetch) goes to a worker that answers through the responder later. Unknown ops never reach it.
 * An exception thrown here answers EIO.
 */
@FunctionalInterface
public interface RequestHandler {
    void handle(Request request, Responder responder);
}
