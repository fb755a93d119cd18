package org.fanstore.runtime.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.fanstore.prep.format.TestVectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** RankDirectory is the golden list in tests/vectors/layout/rank-dir.txt, which the C header is checked against too. */
class RankDirectoryTest {
    static Path golden() {
        return TestVectors.dir("layout/rank-dir.txt");
    }

    @Test
    void namesKindsAndModesAreTheGoldenList() throws IOException {
        List<String> expected = new ArrayList<>();
        for (String line : Files.readAllLines(golden())) {
            if (!line.isBlank() && !line.startsWith("#")) {
                expected.add(String.join(" ", line.trim().split("\\s+")));
            }
        }
        List<String> actual = new ArrayList<>();
        for (RankDirectory n : RankDirectory.values()) {
            actual.add(n.name() + " " + n.place().name().toLowerCase(Locale.ROOT) + " " + n.pattern() + " "
                    + n.kind().name().toLowerCase(Locale.ROOT) + " "
                    + (n.mode() < 0 ? "-" : String.format("%04o", n.mode())));
        }
        assertEquals(expected, actual);
    }

    @Test
    void placeholdersAreFilledInOrder() {
        Path base = Path.of("/dev/shm");
        assertEquals(Path.of("/dev/shm/fanstore-1000-991.2"), RankDirectory.JOB_ROOT.in(base, 1000, "991.2"));
        assertEquals("rank-3", RankDirectory.RANK_DIR.fileName(3));
        assertEquals("2.running", RankDirectory.TASK_RUNNING.fileName(2));
        assertEquals("meta.tbl", RankDirectory.META_TABLE.fileName());
    }

    @Test
    void aWrongNumberOfValuesIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RankDirectory.JOB_ROOT.fileName(1000));
        assertEquals("JOB_ROOT (fanstore-<uid>-<job>) takes 2 values, got 1", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RankDirectory.READY.fileName("x"));
    }

    @Test
    void explicitModesAreWhatFilesGetOnDisk(@TempDir Path dir) throws IOException {
        Path table = Files.createFile(RankDirectory.META_TABLE.in(dir),
                PosixFilePermissions.asFileAttribute(RankDirectory.META_TABLE.permissions()));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(table)));
        Path root = Files.createDirectory(RankDirectory.JOB_ROOT.in(dir, 1, "j"),
                PosixFilePermissions.asFileAttribute(RankDirectory.JOB_ROOT.permissions()));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(root)));
        assertThrows(IllegalStateException.class, RankDirectory.READY::permissions);
    }
}
