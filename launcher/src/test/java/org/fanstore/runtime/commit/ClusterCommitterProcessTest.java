package org.fanstore.runtime.commit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.fanstore.runtime.fetch.RankMain;
import org.fanstore.launcher.rendezvous.RendezvousServer;
import org.fanstore.runtime.world.RankProcesses;

/**
 * Output commits across real rank processes ({@link CommitRankMain}): visibility on every rank before a commit
 * returns, the O_EXCL race, last-commit-wins, a rename across owners, a remote output fetched byte for byte,
 * the drain of every rank into one output directory, and EIO naming a dead rank.
 */
class ClusterCommitterProcessTest {
    @TempDir
    Path dir;

    @Test
    @Timeout(120)
    void twoRanksCommitFetchAndDrainConsistently() throws Exception {
        try (RendezvousServer server =
                        RendezvousServer.start(InetAddress.getLoopbackAddress(), 2,
                                RankMain.JOIN_SECRET, Duration.ofSeconds(30));
                RankProcesses ranks = new RankProcesses(dir)) {
            String endpoint = server.host() + ":" + server.port();
            List<Process> ps = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                ps.add(ranks.start(r, CommitRankMain.class, "commit", "" + r, "2", endpoint, dir.toString()));
            }
            server.awaitCompletion();
            for (int r = 0; r < 2; r++) {
                assertEquals(0, ranks.exitCode(ps.get(r), 90_000), ranks.allOutput());
            }
            String all = ranks.allOutput();
            for (String line : List.of("VISIBLE_OK", "RACE_OK", "LWW_OK", "RENAME_OK", "FETCH_OK", "FINALIZED true")) {
                assertEquals(2 - (line.equals("FETCH_OK") ? 1 : 0), count(all, line), line + " in\n" + all);
            }
            // keys of both ranks' files are owned by both ranks, so both paths (in place, remote) were exercised
            Matcher owners = Pattern.compile("VISIBLE_OK owners=\\[(\\d+), (\\d+)]").matcher(all);
            while (owners.find()) {
                assertTrue(Integer.parseInt(owners.group(1)) > 0 && Integer.parseInt(owners.group(2)) > 0, all);
            }
            // the output directory holds exactly the committed files, each identical to its staging file
            Path out = dir.resolve("out");
            TreeSet<String> expected = new TreeSet<>();
            Matcher m = Pattern.compile("EXPECT (\\S+) (\\S+)").matcher(all);
            while (m.find()) {
                expected.add(m.group(1));
                assertEquals(-1L, Files.mismatch(Path.of(m.group(2)), out.resolve(m.group(1))), m.group(1));
            }
            assertEquals(16 + 16 + 12 + CommitRankMain.LWW_KEYS + 1 + 1, expected.size(), all);
            assertEquals(expected, filesUnder(out), "renamed sources, unlinked files or partial names left over");
        }
    }

    @Test
    @Timeout(120)
    void aDeadOwnerOrPeerTurnsACommitIntoEioNamingItWithinTheBound() throws Exception {
        try (RendezvousServer server =
                        RendezvousServer.start(InetAddress.getLoopbackAddress(), 2,
                                RankMain.JOIN_SECRET, Duration.ofSeconds(30));
                RankProcesses ranks = new RankProcesses(dir)) {
            String endpoint = server.host() + ":" + server.port();
            List<Process> ps = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                ps.add(ranks.start(r, CommitRankMain.class, "survive", "" + r, "2", endpoint, dir.toString()));
            }
            server.awaitCompletion();
            for (int r = 0; r < 2; r++) {
                assertTrue(ranks.awaitOutput(r, "READY", 30_000), ranks.allOutput());
            }
            ps.get(1).destroyForcibly();
            ps.get(1).waitFor();
            RankProcesses.send(ps.get(0), "go");
            assertEquals(0, ranks.exitCode(ps.get(0), 60_000), ranks.allOutput());
            String out = ranks.output(0);
            for (String what : List.of("DEAD_OWNER", "DEAD_PEER")) {
                Matcher m = Pattern.compile(what + " errno=(\\d+) ms=(\\d+)").matcher(out);
                assertTrue(m.find(), out);
                assertEquals(5, Integer.parseInt(m.group(1)), what + " gives EIO:\n" + out);
                assertTrue(Long.parseLong(m.group(2)) < 6_000, what + " within 3 s + a liveness probe:\n" + out);
            }
            assertEquals(2, count(out, "not committed (EIO)"), out);
            assertTrue(out.contains("rank 1 died") || out.contains("rank 1 did not answer"), out);
            assertTrue(!out.contains("Exception"), "no Java class name in the log:\n" + out);
        }
    }

    private static int count(String text, String what) {
        return text.split(Pattern.quote(what), -1).length - 1;
    }

    private static TreeSet<String> filesUnder(Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            TreeSet<String> names = new TreeSet<>();
            s.filter(Files::isRegularFile).forEach(p -> names.add(root.relativize(p).toString()));
            return names;
        }
    }
}
