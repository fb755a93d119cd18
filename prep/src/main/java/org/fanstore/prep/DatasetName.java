package org.fanstore.prep;

import java.nio.charset.StandardCharsets;

/**
 * The rule for {@code --name}: the dataset appears as one directory under the mount ({@code /fanstore/NAME}), so
 * its name must be a single path component: 1 to 255 bytes, no '/', no NUL, not "." or "..". Checked before
 * anything is read, so a bad name is a usage error at prep, not a failure (or a wrong message) at run.
 */
final class DatasetName {
    /** Linux's NAME_MAX: the longest directory entry name. */
    private static final int MAX_BYTES = 255;

    private DatasetName() {
    }

    /** Throws a usage error naming the option and the rule; {@code null} (the default name) passes. */
    static void check(final byte[] name) throws PrepException {
        if (name == null) {
            return;
        }
        final String problem = problem(name);
        if (problem != null) {
            throw new PrepException("--name '" + new String(name, StandardCharsets.UTF_8) + "' " + problem +
                ": the name is one directory under the mount (/fanstore/NAME): 1 to " + MAX_BYTES + " bytes, " +
                "no '/', not '.' or '..'");
        }
    }

    private static String problem(final byte[] name) {
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
