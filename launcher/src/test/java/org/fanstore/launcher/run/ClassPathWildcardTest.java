package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClassPathWildcardTest {
    @TempDir
    Path dir;

    private List<String> jarsInDirectoryOrder(Path lib) throws IOException {
        try (Stream<Path> s = Files.list(lib)) {
            return s.map(Path::toString).filter(n -> n.endsWith(".jar")).toList();
        }
    }

    private Path libWith(String... names) throws IOException {
        Path lib = Files.createDirectories(dir.resolve("lib"));
        for (String n : names) {
            Files.writeString(lib.resolve(n), n);
        }
        return lib;
    }

    private static String cp(String first, List<String> middle, String last) {
        List<String> all = new ArrayList<>();
        all.add(first);
        all.addAll(middle);
        all.add(last);
        return String.join(File.pathSeparator, all);
    }

    @Test
    void aDirectorysJarsInTheJvmsExpansionOrderBecomeItsWildcard() throws IOException {
        Path lib = libWith("a.jar", "b.jar", "c.jar", "notes.txt");
        String expanded = cp("/opt/f/launcher.jar", jarsInDirectoryOrder(lib), "/usr/share/java/mpj.jar");
        assertEquals(cp("/opt/f/launcher.jar", List.of(lib + "/*"), "/usr/share/java/mpj.jar"),
                ClassPathWildcard.compact(expanded));
    }

    @Test
    void anotherOrderOrAMissingJarIsLeftAsItWas() throws IOException {
        Path lib = libWith("a.jar", "b.jar", "c.jar");
        List<String> jars = new ArrayList<>(jarsInDirectoryOrder(lib));
        List<String> reversed = new ArrayList<>(jars);
        java.util.Collections.reverse(reversed);
        String other = cp("x.jar", reversed, "y.jar");
        assertEquals(other, ClassPathWildcard.compact(other));
        String partial = cp("x.jar", jars.subList(0, 2), "y.jar");
        assertEquals(partial, ClassPathWildcard.compact(partial));
    }

    @Test
    void entriesThatAreNotJarsOrCannotBeListedStay() {
        String cp = String.join(File.pathSeparator, "/no/such/dir/a.jar", "classes", "", "plain.jar");
        assertEquals(cp, ClassPathWildcard.compact(cp));
    }
}
