package org.fanstore.runtime.world;

import org.apache.log4j.ConsoleAppender;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;
import org.apache.log4j.PatternLayout;

/**
 * Keeps MPJ's log4j output to warnings on stderr. MPJ logs through log4j 1.2 (reload4j here) and, without
 * an appender, log4j prints "no appenders could be found" noise; MPJ itself sets its "mpj" logger from
 * {@code $MPJ_HOME/conf/mpjexpress.conf} and, when MPJ_HOME is unset, prints a FileNotFoundException
 * stack trace from {@code MPI.Init}. Stack traces MPJ prints with {@code printStackTrace} cannot be
 * silenced from here.
 */
final class MpjLogging {
    private static boolean configured;

    private MpjLogging() {
    }

    static synchronized void quiet() {
        if (configured) {
            return;
        }
        configured = true;
        Logger root = Logger.getRootLogger();
        if (!root.getAllAppenders().hasMoreElements()) {
            root.addAppender(new ConsoleAppender(new PatternLayout("mpj %-5p %c: %m%n"), ConsoleAppender.SYSTEM_ERR));
        }
        root.setLevel(Level.WARN);
        if (System.getenv("MPJ_HOME") == null) {
            System.err.println("fanstore: MPJ_HOME is not set; MPJ will print a stack trace while starting."
                    + " Set MPJ_HOME=/usr/share/mpj (Debian's libmpj-java).");
        }
    }
}
