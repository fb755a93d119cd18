package org.fanstore.launcher.run;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes JSON from maps (key order kept), lists, strings, numbers, booleans and null: enough for the job
 * statistics document, without a library for one writer.
 */
final class Json {
    private Json() {
    }

    static String write(Object value) {
        StringBuilder sb = new StringBuilder();
        write(sb, value, 0);
        return sb.append('\n').toString();
    }

    private static void write(StringBuilder sb, Object v, int depth) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof Map<?, ?> map) {
            object(sb, map, depth);
        } else if (v instanceof List<?> list) {
            array(sb, list, depth);
        } else if (v instanceof String s) {
            string(sb, s);
        } else if (v instanceof Double d) {
            sb.append(d.isNaN() || d.isInfinite() ? "null" : String.format(Locale.ROOT, "%.3f", d));
        } else if (v instanceof Number || v instanceof Boolean) {
            sb.append(v);
        } else {
            string(sb, v.toString());
        }
    }

    private static void object(StringBuilder sb, Map<?, ?> map, int depth) {
        if (map.isEmpty()) {
            sb.append("{}");
            return;
        }
        if (map.size() <= 4 && map.values().stream().allMatch(v -> v instanceof Number)) {
            inline(sb, map);  // e.g. {"count": 200, "p50": 360, "p99": 2883}: one line reads better
            return;
        }
        sb.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> e : map.entrySet()) {
            sb.append(first ? "" : ",");
            newline(sb, depth + 1);
            string(sb, String.valueOf(e.getKey()));
            sb.append(": ");
            write(sb, e.getValue(), depth + 1);
            first = false;
        }
        newline(sb, depth);
        sb.append('}');
    }

    private static void inline(StringBuilder sb, Map<?, ?> map) {
        sb.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> e : map.entrySet()) {
            sb.append(first ? "" : ", ");
            string(sb, String.valueOf(e.getKey()));
            sb.append(": ");
            write(sb, e.getValue(), 0);
            first = false;
        }
        sb.append('}');
    }

    private static void array(StringBuilder sb, List<?> list, int depth) {
        boolean scalars = list.stream().noneMatch(x -> x instanceof Map || x instanceof List);
        sb.append('[');
        for (int i = 0; i < list.size(); i++) {
            sb.append(i == 0 ? "" : scalars ? ", " : ",");
            if (!scalars) {
                newline(sb, depth + 1);
            }
            write(sb, list.get(i), depth + 1);
        }
        if (!scalars && !list.isEmpty()) {
            newline(sb, depth);
        }
        sb.append(']');
    }

    private static void newline(StringBuilder sb, int depth) {
        sb.append('\n').append("  ".repeat(depth));
    }

    private static void string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
