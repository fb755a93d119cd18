package org.fanstore.prep;

/**
 * A problem the user can fix (bad --input, existing --output, a symlink leaving the dataset...). The message is
 * one line that names the path and says what to do; the command prints it without a stack trace and exits 2.
 */
public final class PrepException extends Exception {
    private static final long serialVersionUID = 1L;

    public PrepException(final String message) {
        super(message);
    }

    public PrepException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
