package org.fanstore.runtime.shm;

import java.nio.file.Path;

/**
 * An echo server in its own JVM, so a test can SIGKILL it: {@code ShmEchoServerMain <ctl> <max-seconds>}.
 * Prints "READY" once serving and "HELD" for each held request; exits by itself after max-seconds.
 */
public final class ShmEchoServerMain {
    private static final int SLOTS = 16;
    private static final int SLOT_SIZE = 1024;
    private static final int RING = 4096;

    private ShmEchoServerMain() {
    }

    @SuppressWarnings("try")  // the server is never named in the body: it only has to serve while the body runs
    public static void main(final String[] args) throws Exception {
        final Path ctl = Path.of(args[0]);
        final long maxMillis = Long.parseLong(args[1]) * 1000;
        try (EchoHandler handler = new EchoHandler(1);
            ShmServer server = ShmServer.create(ctl, SLOTS, SLOT_SIZE, RING, handler, true)) {
            System.out.println("READY");
            System.out.flush();
            final long end = System.currentTimeMillis() + maxMillis;
            while (System.currentTimeMillis() < end) {
                if (handler.takeHeld(100) != null) {  // keep held requests unanswered, but say we have them
                    System.out.println("HELD");
                    System.out.flush();
                }
            }
        }
    }
}
