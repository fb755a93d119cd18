package org.fanstore.runtime.lifecycle;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.function.IntConsumer;
import jnr.ffi.LibraryLoader;

/**
 * Signals between the launcher, the runtimes and the user's command. Java has no public API to catch SIGTERM or
 * SIGINT (only shutdown hooks, which cannot tell a second Ctrl-C from the first) nor to signal a process group,
 * so handlers go through {@code sun.misc.Signal} (jdk.unsupported, reached by reflection: javac's warning about
 * it cannot be suppressed and the build treats warnings as errors) and kill(2) through jnr-ffi.
 */
public final class ProcessSignals {
    public static final int SIGINT = 2;
    public static final int SIGKILL = 9;
    public static final int SIGTERM = 15;

    /** Public only because jnr-ffi generates the implementation in its own class loader; not an API. */
    public interface Libc {
        /** kill(2); a negative pid signals that process group. */
        int kill(int pid, int signal);
    }

    private static final Libc LIBC = LibraryLoader.create(Libc.class).load("c");

    private ProcessSignals() {
    }

    /** Sends {@code signal} to every process of group {@code pgid}; false when the group is gone. */
    public static boolean signalGroup(long pgid, int signal) {
        return pgid > 1 && LIBC.kill((int) -pgid, signal) == 0;
    }

    /** Sends {@code signal} to process {@code pid} alone; false when it is gone. */
    public static boolean signalProcess(long pid, int signal) {
        return pid > 1 && LIBC.kill((int) pid, signal) == 0;
    }

    /**
     * Runs {@code handler} (with the signal's number) on a JVM thread each time SIGTERM or SIGINT arrives,
     * instead of the JVM's default of running shutdown hooks and exiting.
     */
    public static void onTermination(IntConsumer handler) {
        install("TERM", handler);
        install("INT", handler);
    }

    /**
     * SIGTERM and SIGINT do nothing to this process. For the runtimes: a terminal's Ctrl-C reaches every process
     * of the launcher's group and SLURM signals every process of the step, but a runtime must keep serving while
     * the user's command writes its last checkpoint; the launcher stops it (stdin) or SIGKILL does.
     */
    public static void ignoreTermination() {
        onTermination(signal -> { });
    }

    private static void install(String name, IntConsumer handler) {
        try {
            Class<?> signalClass = Class.forName("sun.misc.Signal");
            Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
            Object signal = signalClass.getConstructor(String.class).newInstance(name);
            Method number = signalClass.getMethod("getNumber");
            Object proxy = Proxy.newProxyInstance(handlerClass.getClassLoader(), new Class<?>[] {handlerClass},
                (p, method, args) -> {
                    if (method.getName().equals("handle")) {
                        handler.accept((Integer) number.invoke(args[0]));
                        return null;
                    }
                    if (method.getName().equals("equals")) {
                        return p == args[0];
                    }
                    return method.getName().equals("hashCode") ? System.identityHashCode(p) : "handler " + name;
                });
            signalClass.getMethod("handle", signalClass, handlerClass).invoke(null, signal, proxy);
        } catch (ReflectiveOperationException | RuntimeException e) {
            // Without jdk.unsupported the JVM's default stays: shutdown hooks on the first signal.
            System.err.println("fanstore: cannot handle SIG" + name + " (" + e.getMessage() + "); using the default");
        }
    }
}
