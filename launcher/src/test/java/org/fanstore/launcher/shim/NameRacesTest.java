package org.fanstore.launcher.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.fanstore.launcher.run.FanstoreProcess;
import org.fanstore.launcher.run.Soak;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Two ranks race for 200 names in random orders (a new seed each run, printed): rank 1 writes files while rank 0
 * makes directories of the same names (mkdir) or removes the directories the files go in (rmdir), or rank 1 makes
 * a directory in each instead (subdir), or writes its files beside them and renames them in (rename, the
 * checkpoint idiom). Exactly one side
 * wins each name, and what each caller was told is what every rank sees and what the output directory holds
 * (interpose-native/tests/e2e_name_races.py checks the ranks): a close that returned 0 is a file everywhere and the
 * mkdir or rmdir failed (EEXIST, ENOTEMPTY); a mkdir or rmdir that returned 0 holds everywhere and the file's open,
 * close or rename failed; each refused file is named as not saved and the job exits 4. Found by it: mkdir and rmdir
 * returned 0 when the owner refused them (both sides "won"), a refused file stayed visible on its writer's node,
 * a publish made a directory another rank had removed again, an rmdir withdrew another rank's file that had
 * just landed in it (its close had returned 0: the file was lost), and a refused rename stayed done on its node
 * (it returned 0; the other ranks saw neither name: EIO at the first), and an rmdir that removed another rank's
 * subdirectory with it (it ignored directories below as if they were its own; even with no race at all), and the
 * drain of the rank whose mkdir was refused making that directory in the output directory over the winning file
 * before the refusal, then removing it (the name was missing from the output directory; DirectoryDrainTest).
 */
class NameRacesTest {
    private static final int NAMES = 200;

    @TempDir
    Path dir;

    /** Each race once; twice under FANSTORE_SOAK=1 (README). */
    static Stream<String> races() {
        return Stream.of("mkdir", "rmdir", "subdir", "rename").flatMap(m -> Soak.ON ? Stream.of(m, m) : Stream.of(m));
    }

    @ParameterizedTest
    @MethodSource("races")
    void aFileAndADirectoryChangeOfOneNameAtOnceHaveOneWinnerEverywhere(String mode) throws Exception {
        long seed = System.nanoTime() % 1_000_000;
        FanstoreProcess.Result r = ClusterWritesTest.twoRankScript(dir, "e2e_name_races.py", Integer.toString(NAMES),
                Long.toString(seed), mode);
        Path sync = dir.resolve("sync");
        Path saved = dir.resolve("saved");
        String all = mode + " seed " + seed + "\n" + r.stdout() + r.stderr();
        assertTrue(r.stdout().contains("names " + NAMES + " ") && r.stdout().contains(" disagreements 0"), all);
        List<String> rows = Files.readAllLines(sync.resolve("rank-1.txt"));
        assertEquals(NAMES, rows.size(), all);
        int refused = 0;
        for (String row : rows) {
            String[] f = row.split(" ");   // index, what rank 1 was told, what it sees
            Path name = saved.resolve(String.format("race/n%03d", Integer.parseInt(f[0])));
            Path file = mode.equals("mkdir") ? name
                    : name.resolve(Map.of("rmdir", "f", "subdir", "sub", "rename", "ckpt").get(mode));
            Path tmp = saved.resolve(String.format("race/t%03d", Integer.parseInt(f[0])));
            String bytes = ("name " + f[0] + " written by rank 1\n").repeat(100);
            if (f[1].equals("file-ok") && mode.equals("subdir")) {
                assertTrue(Files.isDirectory(file), row + "\n" + all);
            } else if (f[1].equals("file-ok")) {
                assertEquals(bytes, Files.readString(file), all);
                assertTrue(!Files.exists(tmp), row + "\n" + all);
            } else {
                // mkdir won: its directory; rmdir won: nothing left of the name (no empty directory either), and a
                // renamed file is still at its first name
                assertEquals(mode.equals("mkdir"), Files.isDirectory(name), row + "\n" + all);
                assertTrue(mode.equals("mkdir") || !Files.exists(name), row + "\n" + all);
                if (mode.equals("rename")) {
                    assertEquals(bytes, Files.readString(tmp), row + "\n" + all);
                }
                refused += f[1].startsWith("close-") ? 1 : 0;
            }
        }
        if (refused > 0) {
            assertTrue(all.contains("fanstore: " + refused + " output file(s) were not saved to " + saved), all);
        }
        assertEquals(refused > 0 ? 4 : 0, r.status(), all);
    }
}
