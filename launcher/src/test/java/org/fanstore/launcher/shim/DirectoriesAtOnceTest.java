package org.fanstore.launcher.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.fanstore.launcher.run.FanstoreProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every rank makes the same directories at once and writes a file in each, as training scripts do with
 * {@code os.makedirs(..., exist_ok=True)} before a checkpoint: every file must be seen by every rank and drained.
 * A directory is decided by its path's owner and a file by its own, so a writer can see a directory (applied from
 * one owner's broadcast) before the file's owner has applied it: the file's commit must not then be refused with
 * ENOENT and lost (commit/README.md, "A parent one broadcast behind"). 3 real ranks through the shim.
 */
class DirectoriesAtOnceTest {
    private static final int DIRS = 80;
    private static final int RANKS = 3;

    @TempDir
    Path dir;

    @Test
    void everyFileUnderDirectoriesMadeAtOnceByEveryRankIsSeenEverywhereAndDrained() throws Exception {
        Path data = ClusterWritesTest.oneFileDataset(dir);
        Path sync = Files.createDirectories(dir.resolve("sync"));
        Path outDir = Files.createDirectories(dir.resolve("saved"));
        Path script = Files.writeString(dir.resolve("dirs.py"), String.join("\n",
                "import errno, os, sys, time",
                "sync, n, ranks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])",
                "rank = os.environ['FANSTORE_RANK']",
                "base = '/fanstore/out'",
                "for i in range(n):",
                "    d = '%s/d%03d' % (base, i)",
                "    os.makedirs(d, exist_ok=True)",
                "    with open('%s/r%s' % (d, rank), 'w') as f:",
                "        f.write('dir %d rank %s\\n' % (i, rank))",
                "open(os.path.join(sync, 'done-' + rank), 'w').close()",
                "deadline = time.time() + 60",
                "while len([x for x in os.listdir(sync) if x.startswith('done-')]) < ranks and time.time() < deadline:",
                "    time.sleep(0.05)",
                "missing = []",
                "for i in range(n):",
                "    for r in range(ranks):",
                "        p = 'd%03d/r%d' % (i, r)",
                "        try:",
                "            with open(base + '/' + p) as f:",
                "                if f.read() != 'dir %d rank %d\\n' % (i, r):",
                "                    missing.append(p + ':wrong')",
                "        except OSError as e:",
                "            missing.append('%s:%s' % (p, errno.errorcode.get(e.errno)))",
                "print('rank %s missing %d %s' % (rank, len(missing), ' '.join(missing[:10])), flush=True)",
                ""));
        FanstoreProcess.Result r = FanstoreProcess.run(dir, Map.of("FANSTORE_JOB_ID", "dirs" + System.nanoTime()),
                240, "run", "--ranks", Integer.toString(RANKS), "--output-dir", outDir.toString(), "--data",
                data.toString(), "--", "/usr/bin/python3", script.toString(), sync.toString(),
                Integer.toString(DIRS), Integer.toString(RANKS));
        String all = r.stdout() + r.stderr();
        assertEquals(0, r.status(), all);
        for (int rank = 0; rank < RANKS; rank++) {
            assertTrue(r.stdout().contains("rank " + rank + " missing 0 "), all);
        }
        try (Stream<Path> s = Files.walk(outDir.resolve("out"))) {
            List<Path> files = s.filter(Files::isRegularFile).toList();
            assertEquals(DIRS * RANKS, files.size(), "drained files\n" + all);
        }
        for (int i = 0; i < DIRS; i++) {
            for (int rank = 0; rank < RANKS; rank++) {
                assertEquals("dir " + i + " rank " + rank + "\n", Files.readString(outDir.resolve(
                        String.format("out/d%03d/r%d", i, rank))));
            }
        }
    }
}
