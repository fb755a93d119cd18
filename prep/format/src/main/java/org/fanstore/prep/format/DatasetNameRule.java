package org.fanstore.prep.format;

/**
 * What a dataset's name must be: it appears as one directory under the mount ({@code /fanstore/NAME}), so a
 * single path component of 1 to 255 bytes (Linux's NAME_MAX), without '/' or NUL, not "." or "..". prep refuses
 * another {@code --name}; a manifest edited to hold one is refused when read, before a job could fail on it.
 */
public final class DatasetNameRule {
    /** The rule in words, for messages. */
    public static final String RULE = "one directory under the mount (/fanstore/NAME): 1 to 255 bytes, no '/', " +
        "not '.' or '..'";
    private static final int MAX_BYTES = 255;

    private DatasetNameRule() {
    }

    /** What is wrong with {@code name} ("contains '/'"), or null when it follows the rule. */
    public static String problem(final byte[] name) {
        if (name.length == 0) {
            return "is empty";
        }
        if (name.length > MAX_BYTES) {
            return "is " + name.length + " bytes long";
        }
        for (final byte b : name) {
            if (b == '/') {
                return "contains '/'";
            }
            if (b == 0) {
                return "contains a NUL byte";
            }
        }
        if (name.length <= 2 && name[0] == '.' && (name.length == 1 || name[1] == '.')) {
            return "is a relative directory reference";
        }
        return null;
    }
}
