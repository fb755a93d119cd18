package org.fanstore.launcher.startup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which archive fits a runtime: the key follows everything that makes an archive valid, and only a fit is passed. */
class ClassArchiveTest {
    private static final List<String> FLAGS = List.of("-XX:+UseSerialGC", "-Xss512k");

    @TempDir
    Path dir;

    private String classPath() {
        return dir.resolve("a.jar") + File.pathSeparator + dir.resolve("lib/b.jar");
    }

    private void jars() throws Exception {
        Files.createDirectories(dir.resolve("lib"));
        Files.write(dir.resolve("a.jar"), new byte[] {1, 2, 3});
        Files.write(dir.resolve("lib/b.jar"), new byte[] {4});
        Files.setLastModifiedTime(dir.resolve("a.jar"), FileTime.fromMillis(1_000_000));
        Files.setLastModifiedTime(dir.resolve("lib/b.jar"), FileTime.fromMillis(2_000_000));
    }

    @Test
    void theKeyFollowsEachJarsSizeAndTimeTheFlagsTheJdkAndTheClassPath() throws Exception {
        jars();
        String k = ClassArchive.key("/jdk", "17.0.15", FLAGS, classPath());
        assertEquals(k, ClassArchive.key("/jdk", "17.0.15", FLAGS, classPath()), "stable for the same inputs");
        assertEquals(16, k.length());
        Files.setLastModifiedTime(dir.resolve("lib/b.jar"), FileTime.fromMillis(2_000_001));
        String touched = ClassArchive.key("/jdk", "17.0.15", FLAGS, classPath());
        assertNotEquals(k, touched, "a rebuilt jar (new time) needs a new archive");
        Files.write(dir.resolve("a.jar"), new byte[] {1, 2, 3, 4});
        Files.setLastModifiedTime(dir.resolve("a.jar"), FileTime.fromMillis(1_000_000));
        Files.setLastModifiedTime(dir.resolve("lib/b.jar"), FileTime.fromMillis(2_000_000));
        assertNotEquals(k, ClassArchive.key("/jdk", "17.0.15", FLAGS, classPath()), "same time, other size");
        Files.write(dir.resolve("a.jar"), new byte[] {1, 2, 3});
        Files.setLastModifiedTime(dir.resolve("a.jar"), FileTime.fromMillis(1_000_000));
        assertEquals(k, ClassArchive.key("/jdk", "17.0.15", FLAGS, classPath()), "back to the same bytes and time");
        assertNotEquals(k, ClassArchive.key("/other-jdk", "17.0.15", FLAGS, classPath()));
        assertNotEquals(k, ClassArchive.key("/jdk", "17.0.16", FLAGS, classPath()));
        assertNotEquals(k, ClassArchive.key("/jdk", "17.0.15", List.of("-XX:+UseG1GC"), classPath()));
        String reordered = dir.resolve("lib/b.jar") + File.pathSeparator + dir.resolve("a.jar");
        assertNotEquals(k, ClassArchive.key("/jdk", "17.0.15", FLAGS, reordered), "class path order matters to CDS");
        Files.delete(dir.resolve("lib/b.jar"));
        assertNotEquals(k, ClassArchive.key("/jdk", "17.0.15", FLAGS, classPath()), "a missing jar changes it");
    }

    @Test
    void onlyAnArchiveWithThisKeyIsPassedAndTheUsersSharingChoiceWins() throws Exception {
        jars();
        Path cds = Files.createDirectories(dir.resolve("cds"));
        assertEquals(List.of(), ClassArchive.flags(Optional.of(cds), FLAGS, classPath(), ""), "no archive: no flag");
        String key = ClassArchive.key(ClassArchive.javaHome(), ClassArchive.vmVersion(), FLAGS, classPath());
        Files.write(cds.resolve("runtime-0000000000000000.jsa"), new byte[] {0});
        assertEquals(List.of(), ClassArchive.flags(Optional.of(cds), FLAGS, classPath(), ""), "another key's");
        Path archive = cds.resolve("runtime-" + key + ".jsa");
        Files.write(archive, new byte[] {0});
        List<String> flags = ClassArchive.flags(Optional.of(cds), FLAGS, classPath(), "-Xmx2g");
        assertEquals(List.of("-XX:SharedArchiveFile=" + archive, "-Xshare:auto", "-Xlog:cds=off"), flags);
        for (String user : List.of("-Xshare:off", "-XX:SharedArchiveFile=/x.jsa", "-XX:ArchiveClassesAtExit=/y",
                "-XX:DumpLoadedClassList=/z")) {
            assertEquals(List.of(), ClassArchive.flags(Optional.of(cds), FLAGS, classPath(), user), user);
        }
        assertEquals(List.of(), ClassArchive.flags(Optional.empty(), FLAGS, classPath(), ""));
        Files.setLastModifiedTime(dir.resolve("a.jar"), FileTime.fromMillis(3_000_000));
        assertEquals(List.of(), ClassArchive.flags(Optional.of(cds), FLAGS, classPath(), ""), "jar rebuilt");
    }

    @Test
    void theBuildPutsTheArchiveBesideTheLauncherClasses() {
        Path d = ClassArchive.directory().orElseThrow();
        assertEquals("cds", d.getFileName().toString());
        assertTrue(Files.isDirectory(d.getParent()), d.toString());
    }
}
