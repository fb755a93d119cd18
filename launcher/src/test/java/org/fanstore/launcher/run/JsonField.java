package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import java.util.Map;

/** Reads a counter out of a job's `--stats` JSON (the tests only need integers). */
final class JsonField {
    private JsonField() {
    }

    /** The first {@code "key": N} in {@code json}, in document order; fails the test when the key is missing. */
    static long first(String json, String key) {
        Long found = find(JsonParser.parseString(json), key);
        assertNotNull(found, key + " missing");
        return found;
    }

    private static Long find(JsonElement e, String key) {
        if (e.isJsonObject()) {
            for (Map.Entry<String, JsonElement> m : e.getAsJsonObject().entrySet()) {
                JsonElement v = m.getValue();
                if (m.getKey().equals(key) && v.isJsonPrimitive() && v.getAsJsonPrimitive().isNumber()) {
                    return v.getAsLong();
                }
                Long inner = find(v, key);
                if (inner != null) {
                    return inner;
                }
            }
        } else if (e.isJsonArray()) {
            for (JsonElement x : e.getAsJsonArray()) {
                Long inner = find(x, key);
                if (inner != null) {
                    return inner;
                }
            }
        }
        return null;
    }
}
