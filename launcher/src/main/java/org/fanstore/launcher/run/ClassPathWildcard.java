package org.fanstore.launcher.run;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Writes a class path back in the {@code dir/*} form the {@code fanstore} script gave it, so a runtime's command line
 * stays short: a rank's arguments then sit within the first page of {@code /proc/PID/cmdline}, which is all that
 * {@code ps}-like tools (and the JDK's {@code ProcessHandle.Info}) show.
 *
 * <p>A run of entries becomes {@code dir/*} only when it is exactly the jars the JVM's own wildcard expansion gives
 * for that directory, in the same (directory) order; so the runtime sees the very class path the launcher has, and
 * the class archive keyed on it (startup/README.md) still applies. Anything else, and a lone jar, is left as it
 * was.
 */
final class ClassPathWildcard {
    private ClassPathWildcard() {
    }

    static String compact(String classPath) {
        List<String> entries = List.of(classPath.split(File.pathSeparator, -1));
        List<String> out = new ArrayList<>();
        int i = 0;
        while (i < entries.size()) {
            String entry = entries.get(i);
            Path dir = isJar(entry) ? Path.of(entry).getParent() : null;
            List<String> jars = dir == null ? List.of() : jarsAsExpanded(dir);
            if (jars.size() > 1 && i + jars.size() <= entries.size()
                    && entries.subList(i, i + jars.size()).equals(jars)) {
                out.add(dir + File.separator + "*");
                i += jars.size();
            } else {
                out.add(entry);
                i++;
            }
        }
        return String.join(File.pathSeparator, out);
    }

    private static boolean isJar(String entry) {
        return entry.endsWith(".jar") || entry.endsWith(".JAR");
    }

    /** The entries {@code dir/*} expands to: the directory's jars in directory order, or none if it cannot be read. */
    private static List<String> jarsAsExpanded(Path dir) {
        try (Stream<Path> listing = Files.list(dir)) {
            return listing.map(Path::toString).filter(ClassPathWildcard::isJar).toList();
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }
}
