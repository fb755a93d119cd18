package org.fanstore.runtime;

import java.util.List;

/**
 * The one line a rank that stops on an exception gives the launcher (and so the user). Exceptions fanstore raises
 * for a reason carry a sentence for the user and pass as they are; those that can only come from a bug in fanstore
 * (a null, a bad index or cast, a missing class) carry the JVM's words, with class names, and are replaced by a line
 * that says what it is and what to do.
 */
final class FatalMessage {
    static final String BUG = "an internal error stopped this rank (a bug in fanstore: rerun with FANSTORE_DEBUG=1"
            + " to print where, and report it)";
    private static final List<Class<? extends Throwable>> BUGS = List.of(NullPointerException.class,
            ClassCastException.class, IndexOutOfBoundsException.class, ArithmeticException.class,
            ArrayStoreException.class, NegativeArraySizeException.class, LinkageError.class, StackOverflowError.class);

    private FatalMessage() {
    }

    static String of(Throwable t) {
        for (Class<? extends Throwable> bug : BUGS) {
            if (bug.isInstance(t)) {
                return BUG;
            }
        }
        String message = t.getMessage() != null ? t.getMessage()
                : "internal error without a message (FANSTORE_DEBUG=1 shows where)";
        return message.replace('\n', ' ');
    }
}
