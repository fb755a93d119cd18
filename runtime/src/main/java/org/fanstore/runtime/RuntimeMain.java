package org.fanstore.runtime;

import java.io.IOException;
import java.io.InputStream;

/**
 * Entry point of one runtime rank (started by {@code fanstore run}, never by hand). Reports on stdout with
 * {@code FANSTORE-READY ...} / {@code FANSTORE-ERROR ...} lines, and shuts down when its stdin closes: the
 * launcher closes it to stop the job, and the kernel closes it when the launcher dies.
 */
public final class RuntimeMain {
    private RuntimeMain() {
    }

    public static void main(String[] args) {
        NodeRuntime runtime = null;
        int status = 0;
        try {
            RuntimeConfig config = RuntimeConfig.parse(args);
            runtime = NodeRuntime.start(config);
            System.out.println("FANSTORE-READY " + runtime.readyFields());
            System.out.flush();
            awaitStdinClosed(System.in);
            runtime.finish();
            for (String line : runtime.statsLines()) {
                System.out.println("FANSTORE-STATS " + line);
            }
            System.out.flush();
            runtime = null;
        } catch (Throwable t) {
            String message = t.getMessage() != null ? t.getMessage() : t.toString();
            System.out.println("FANSTORE-ERROR " + message.replace('\n', ' '));
            System.out.flush();
            if (!(t instanceof IOException || t instanceof IllegalArgumentException
                    || t instanceof IllegalStateException)) {
                t.printStackTrace();
            }
            status = 1;
        } finally {
            if (runtime != null) {
                runtime.close();
            }
        }
        // MPJ leaves non-daemon threads behind; only exit() ends the JVM.
        System.exit(status);
    }

    private static void awaitStdinClosed(InputStream in) throws IOException {
        byte[] sink = new byte[256];
        while (in.read(sink) >= 0) {
            // Anything written is ignored; only end-of-file matters.
        }
    }
}
