package org.fanstore.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The runtime's package structure, read from the {@code import} lines of runtime/src/main: no package cycles,
 * {@code stats} a leaf, and MPJ Express ({@code mpi.*}, {@code mpjbuf.*}, {@code mpjdev.*}, {@code xdev.*}) reached
 * only through {@code world}.
 */
class PackageGraphTest {
    private static final String ROOT = "org.fanstore.runtime";
    private static final String MPJ_DOOR = ROOT + ".world";
    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    private static final Pattern RUNTIME_IMPORT =
            Pattern.compile("^import (?:static )?org\\.fanstore\\.runtime((?:\\.[a-z]\\w*)*)\\.[A-Z][\\w.*]*;",
                    Pattern.MULTILINE);
    private static final Pattern MPJ_IMPORT =
            Pattern.compile("^import (?:static )?(mpi|mpjbuf|mpjdev|xdev)\\.", Pattern.MULTILINE);

    /** Package -> the runtime packages its classes import (itself excluded); and the MPJ importers. */
    private final Map<String, Set<String>> graph = new TreeMap<>();
    private final Set<String> mpjImporters = new TreeSet<>();

    PackageGraphTest() throws IOException {
        Path main = Path.of("src/main/java");
        try (Stream<Path> files = Files.walk(main)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
                String src = Files.readString(f);
                Matcher p = PACKAGE.matcher(src);
                if (!p.find()) {
                    continue;
                }
                String pkg = p.group(1);
                Set<String> to = graph.computeIfAbsent(pkg, k -> new TreeSet<>());
                Matcher m = RUNTIME_IMPORT.matcher(src);
                while (m.find()) {
                    String target = ROOT + m.group(1);
                    if (!target.equals(pkg)) {
                        to.add(target);
                    }
                }
                if (MPJ_IMPORT.matcher(src).find()) {
                    mpjImporters.add(pkg + " (" + main.relativize(f) + ")");
                }
            }
        }
    }

    @Test
    void noPackageCycles() {
        List<String> cycles = new ArrayList<>();
        for (String start : graph.keySet()) {
            for (String next : graph.get(start)) {
                List<String> path = pathTo(next, start, new TreeSet<>());
                if (path != null) {
                    cycles.add(start + " -> " + String.join(" -> ", path));
                }
            }
        }
        assertEquals(List.of(), cycles, "package cycles in runtime/src/main; the graph: " + graph);
    }

    @Test
    void statsIsALeaf() {
        assertEquals(Set.of(), graph.getOrDefault(ROOT + ".stats", Set.of()), "stats imports other runtime packages");
    }

    @Test
    void onlyWorldImportsMpj() {
        List<String> others = mpjImporters.stream().filter(s -> !s.startsWith(MPJ_DOOR + " ")).toList();
        assertEquals(List.of(), others, "only " + MPJ_DOOR + " may import MPJ Express");
    }

    /** A path from {@code from} to {@code goal} (both included), or null. */
    private List<String> pathTo(String from, String goal, Set<String> seen) {
        if (from.equals(goal)) {
            return new ArrayList<>(List.of(from));
        }
        if (!seen.add(from)) {
            return null;
        }
        for (String next : graph.getOrDefault(from, Set.of())) {
            List<String> rest = pathTo(next, goal, seen);
            if (rest != null) {
                rest.add(0, from);
                return rest;
            }
        }
        return null;
    }
}
