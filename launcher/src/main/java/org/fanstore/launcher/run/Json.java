package org.fanstore.launcher.run;

import com.google.gson.FormattingStyle;
import com.google.gson.stream.JsonWriter;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes JSON from maps (key order kept), lists, strings, numbers, booleans and null with Gson's streaming writer,
 * laid out for a reader: two-space indents, an object of up to 4 numbers and a list of scalars on one line
 * ({@code {"count": 200, "p50": 360, "p99": 2883}}), a double with 3 decimals (NaN and infinities as null).
 * The layout is the one the hand-made writer before it had (docs/decisions/json-library.md).
 */
final class Json {
    private static final FormattingStyle ONE_LINE = FormattingStyle.COMPACT.withSpaceAfterSeparators(true);

    private Json() {
    }

    static String write(Object value) {
        return text(value, FormattingStyle.PRETTY) + "\n";
    }

    private static String text(Object value, FormattingStyle style) {
        StringWriter out = new StringWriter();
        try (JsonWriter w = new JsonWriter(out)) {
            w.setFormattingStyle(style);
            write(w, value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);  // a StringWriter does not throw
        }
        return out.toString();
    }

    private static void write(JsonWriter w, Object v) throws IOException {
        boolean pretty = w.getFormattingStyle() != ONE_LINE;
        if (v == null) {
            w.nullValue();
        } else if (v instanceof Map<?, ?> map) {
            if (pretty && !map.isEmpty() && map.size() <= 4
                    && map.values().stream().allMatch(x -> x instanceof Number)) {
                w.jsonValue(text(map, ONE_LINE));
                return;
            }
            w.beginObject();
            for (Map.Entry<?, ?> e : map.entrySet()) {
                w.name(String.valueOf(e.getKey()));
                write(w, e.getValue());
            }
            w.endObject();
        } else if (v instanceof List<?> list) {
            if (pretty && list.stream().noneMatch(x -> x instanceof Map || x instanceof List)) {
                w.jsonValue(text(list, ONE_LINE));
                return;
            }
            w.beginArray();
            for (Object x : list) {
                write(w, x);
            }
            w.endArray();
        } else if (v instanceof Double d) {
            if (d.isNaN() || d.isInfinite()) {
                w.nullValue();
            } else {
                w.value(new BigDecimal(String.format(Locale.ROOT, "%.3f", d)));
            }
        } else if (v instanceof Number n) {
            w.value(n);
        } else if (v instanceof Boolean b) {
            w.value(b);
        } else {
            w.value(v.toString());
        }
    }
}
