package org.fanstore.launcher.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.fanstore.launcher.run.FanstoreProcess;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file and a directory of the same name made at once on two ranks, 200 names in random orders (a new seed each
 * run, printed): exactly one wins each name, and what each caller was told is what every rank sees and what the
 * output directory holds (interpose-native/tests/e2e_name_races.py checks the ranks). A close that returned 0 is a
 * file everywhere and the mkdir of its name failed with EEXIST; a mkdir that returned 0 is a directory everywhere
 * and the file's open or close failed; each refused file is named as not saved and the job exits 4. Found by it:
 * mkdir returned 0 when its name's commit was refused (both sides "won"), and a refused file stayed visible on its
 * writer's node.
 */
class NameRacesTest {
    private static final int NAMES = 200;

    @TempDir
    Path dir;

    @RepeatedTest(2)
    void aFileAndADirectoryOfOneNameAtOnceHaveOneWinnerEverywhere() throws Exception {
        Path data = ClusterWritesTest.oneFileDataset(dir);
        Path sync = Files.createDirectories(dir.resolve("sync"));
        Path saved = Files.createDirectories(dir.resolve("saved"));
        long seed = System.nanoTime() % 1_000_000;
        FanstoreProcess.Result r = FanstoreProcess.run(dir, Map.of("FANSTORE_JOB_ID", "races" + System.nanoTime()),
                180, "run", "--ranks", "2", "--output-dir", saved.toString(), "--data", data.toString(), "--",
                "/usr/bin/python3", FanstoreProcess.repo().resolve("interpose-native/tests/e2e_name_races.py")
                .toString(), sync.toString(), Integer.toString(NAMES), Long.toString(seed));
        String all = "seed " + seed + "\n" + r.stdout() + r.stderr();
        assertTrue(r.stdout().contains("names " + NAMES + " ") && r.stdout().contains(" disagreements 0"), all);
        List<String> rows = Files.readAllLines(sync.resolve("rank-1.txt"));
        assertEquals(NAMES, rows.size(), all);
        int refused = 0;
        for (String row : rows) {
            String[] f = row.split(" ");   // index, what rank 1 was told, what it sees
            Path out = saved.resolve(String.format("race/n%03d", Integer.parseInt(f[0])));
            if (f[1].equals("file-ok")) {
                assertEquals(("name " + f[0] + " written by rank 1\n").repeat(100), Files.readString(out), all);
            } else {
                assertTrue(Files.isDirectory(out), row + "\n" + all);
                refused += f[1].startsWith("close-") ? 1 : 0;
            }
        }
        if (refused > 0) {
            assertTrue(all.contains("fanstore: " + refused + " output file(s) were not saved to " + saved), all);
        }
        assertEquals(refused > 0 ? 4 : 0, r.status(), all);
    }
}
