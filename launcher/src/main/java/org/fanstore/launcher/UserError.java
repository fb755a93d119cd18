package org.fanstore.launcher;

/** A mistake the user can fix (missing path, wrong kind of entry); printed as one line, exit code 2. */
public final class UserError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UserError(final String message) {
        super(message);
    }
}
