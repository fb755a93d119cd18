package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The `--stats` layout, byte for byte as the hand-made writer before Gson wrote it (scripts and tests read it). */
class JsonTest {
    @Test
    void layoutIsTheOneReadersKnow() {
        Map<String, Object> job = new LinkedHashMap<>();
        job.put("id", "a\t\"b\"\\ \u0001 é");
        job.put("wall_s", 12.3456789);
        job.put("nan", Double.NaN);
        job.put("ok", true);
        job.put("none", null);
        job.put("command", List.of("sh", "-c", "echo hi"));
        job.put("empty_list", List.of());
        job.put("empty_map", Map.of());
        Map<String, Object> inline = new LinkedHashMap<>();
        inline.put("count", 200L);
        inline.put("p50", 360);
        inline.put("p99", 2883L);
        Map<String, Object> five = new LinkedHashMap<>();
        for (int i = 0; i < 5; i++) {
            five.put("k" + i, (long) i);
        }
        List<Object> mixed = new ArrayList<>(Arrays.asList(Map.of("a", 1L), List.of(1, 2)));
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("schema_version", 2);
        doc.put("job", job);
        doc.put("latency", inline);
        doc.put("five", five);
        doc.put("mixed", mixed);
        assertEquals("""
                {
                  "schema_version": 2,
                  "job": {
                    "id": "a\\t\\"b\\"\\\\ \\u0001 é",
                    "wall_s": 12.346,
                    "nan": null,
                    "ok": true,
                    "none": null,
                    "command": ["sh", "-c", "echo hi"],
                    "empty_list": [],
                    "empty_map": {}
                  },
                  "latency": {"count": 200, "p50": 360, "p99": 2883},
                  "five": {
                    "k0": 0,
                    "k1": 1,
                    "k2": 2,
                    "k3": 3,
                    "k4": 4
                  },
                  "mixed": [
                    {"a": 1},
                    [1, 2]
                  ]
                }
                """, Json.write(doc));
    }
}
