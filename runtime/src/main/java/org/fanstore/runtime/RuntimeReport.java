package org.fanstore.runtime;

/**
 * The lines a runtime prints on stdout at the end of a job about its outputs, read by the launcher. Each is the
 * prefix followed by its fields; keys are paths relative to the mount, made {@link #printable}.
 */
public final class RuntimeReport {
    /** {@code KEY TAB WHY}: a file of the job's final tree that is not on the output directory. */
    public static final String OUTPUT_FAILED = "FANSTORE-OUTPUT-FAILED ";
    /** {@code files=N bytes=B ms=M}: what this rank's drain copied, and how long it was busy. */
    public static final String OUTPUT_DRAINED = "FANSTORE-OUTPUT-DRAINED ";

    private RuntimeReport() {
    }

    /** A path may hold any byte but NUL and '/': a tab or newline in it would break the line format. */
    public static String printable(String text) {
        return text.replace('\t', '?').replace('\n', '?');
    }
}
