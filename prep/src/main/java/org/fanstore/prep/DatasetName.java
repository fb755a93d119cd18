package org.fanstore.prep;

import java.nio.charset.StandardCharsets;

import org.fanstore.prep.format.DatasetNameRule;

/**
 * {@code --name} against {@link DatasetNameRule}, checked before anything is read, so a bad name is a usage error
 * at prep, not a failure (or a wrong message) at run.
 */
final class DatasetName {
    private DatasetName() {
    }

    /** Throws a usage error naming the option and the rule; {@code null} (the default name) passes. */
    static void check(final byte[] name) throws PrepException {
        if (name == null) {
            return;
        }
        final String problem = DatasetNameRule.problem(name);
        if (problem != null) {
            throw new PrepException("--name '" + new String(name, StandardCharsets.UTF_8) + "' " + problem +
                ": the name is " + DatasetNameRule.RULE);
        }
    }
}
