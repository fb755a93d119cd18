package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads a counter out of a job's `--stats` JSON without a JSON library (the tests only need integers). */
final class JsonField {
    private JsonField() {
    }

    /** The first {@code "key": N} in {@code json}; fails the test when the key is missing. */
    static long first(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\": (\\d+)").matcher(json);
        assertTrue(m.find(), key + " missing");
        return Long.parseLong(m.group(1));
    }
}
