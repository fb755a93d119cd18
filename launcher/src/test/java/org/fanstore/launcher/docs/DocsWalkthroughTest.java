package org.fanstore.launcher.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.fanstore.launcher.run.FanstoreProcess;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The documentation cannot drift from the code: every command block of the README and the user guide is run as a
 * newcomer would type it (tests/docs/walkthrough.py: real fanstore jobs, a real test SLURM cluster, real mpirun and
 * hydra), and what the page shows must be what the commands print. Also the pages' promised shape: sizes, and the
 * current numbers first in bench/RESULTS.md.
 */
class DocsWalkthroughTest {
    private static final Path REPO = FanstoreProcess.repo();
    private static final List<String> PAGES = List.of("README.md", "docs/user-guide.md");
    /** Both pages walk at once, as two newcomers on one machine would: each has its own sandbox and cluster. */
    private static final Map<String, CompletableFuture<Run>> WALKS = new ConcurrentHashMap<>();

    @BeforeAll
    static void startBothWalks() {
        if ("root".equals(System.getProperty("user.name"))) {
            for (String page : PAGES) {
                WALKS.put(page, CompletableFuture.supplyAsync(() -> {
                    try {
                        return run(page);
                    } catch (Exception e) {
                        return new Run(-1, page + ": the walk-through could not run: " + e);
                    }
                }, task -> new Thread(task, "walk " + page).start()));
            }
        }
    }

    @Test
    void everyCommandOfTheReadmeRunsAsShown() throws Exception {
        walk("README.md");
    }

    @Test
    void everyCommandOfTheUserGuideRunsAsShown() throws Exception {
        walk("docs/user-guide.md");
    }

    @Test
    void aPageThatShowsWhatTheCommandDoesNotPrintFails(@TempDir Path dir) throws Exception {
        Path page = dir.resolve("page.md");
        Files.writeString(page, "# p\n```console\n$ echo one; echo two\ntwo\none\n```\n");
        Run r = run(page.toString());
        assertEquals(1, r.status, r.output);
        assertTrue(r.output.contains("the page shows a line it did not print:\n    one"), r.output);
        Files.writeString(page, "# p\n```bash\n$ echo not run\n```\n");
        r = run(page.toString());
        assertEquals(1, r.status, r.output);
        assertTrue(r.output.contains("must be tagged `console`"), r.output);
        Files.writeString(page, "# p\n```console\n$ test -d /; echo \"exit $?\"\nexit 0\n$ false\n```\n");
        r = run(page.toString());
        assertEquals(1, r.status, r.output);
        assertTrue(r.output.contains("$ false\n  exited 1"), r.output);
    }

    /** A page that starts a test S3 server and then fails leaves no server behind (it would hold its port). */
    @Test
    void aPageThatFailsAfterStartingAServerLeavesNoneRunning(@TempDir Path dir) throws Exception {
        Path page = dir.resolve("page.md");
        Path where = dir.resolve("sandbox.txt");
        Files.writeString(page, "# p\n```console\n$ echo $TMPDIR > " + where + "\n$ mkdir -p $TMPDIR/s3/data/b\n"
                + "$ tests/s3/s3proxy.sh start $TMPDIR/s3 >/dev/null\n$ false\n```\n");
        Run r = run(page.toString());
        assertEquals(1, r.status, r.output);
        assertTrue(r.output.contains("$ false\n  exited 1"), r.output);
        String sandbox = Files.readString(where).strip();
        List<String> left = ProcessHandle.allProcesses().map(p -> p.info().commandLine().orElse(""))
                .filter(c -> c.contains("s3proxy") && c.contains(sandbox)).toList();
        assertTrue(left.isEmpty(), "servers the failed page left running: " + left);
    }

    @Test
    void thePagesHaveTheirPromisedShape() throws IOException {
        assertTrue(lines("README.md").size() < 150, "README.md must stay under 150 lines");
        assertTrue(lines("docs/user-guide.md").size() > 100, "docs/user-guide.md");
        assertTrue(lines("docs/architecture.md").size() > 100, "docs/architecture.md");
        List<String> results = lines("bench/RESULTS.md");
        assertTrue(results.size() <= 400, "bench/RESULTS.md holds the current numbers only: " + results.size());
        String firstSection = results.stream().filter(l -> l.startsWith("## ")).findFirst().orElse("");
        assertEquals("## Current numbers", firstSection);
    }

    /** Every link and every backticked repository path on the pages names a file or directory that exists. */
    @Test
    void everyPathThePagesNameExists() throws IOException {
        Pattern link = Pattern.compile("\\]\\(([^)\\s]+)\\)|^\\[[^\\]]+\\]:\\s*(\\S+)", Pattern.MULTILINE);
        Pattern code = Pattern.compile(
                "`((?:docs|scripts|tests|bench|runtime|prep|launcher|interpose-native)/[^`\\s]*)`");
        List<String> missing = new ArrayList<>();
        for (String page : List.of("README.md", "docs/user-guide.md", "docs/architecture.md", "bench/RESULTS.md")) {
            String text = Files.readString(REPO.resolve(page));
            Path dir = REPO.resolve(page).getParent();
            Matcher m = link.matcher(text);
            while (m.find()) {
                String target = m.group(1) != null ? m.group(1) : m.group(2);
                if (target.contains("://") || target.startsWith("#")) {
                    continue;
                }
                String file = target.replaceAll("#.*", "");
                if (!Files.exists(dir.resolve(file).normalize())) {
                    missing.add(page + ": link " + target);
                }
            }
            Matcher c = code.matcher(text);
            while (c.find()) {
                String path = c.group(1).replaceAll("[.,:;]+$", "");
                if (path.matches(".*[<>*{}].*") || path.contains("...")) {
                    continue; // a pattern, not a path
                }
                if (!Files.exists(REPO.resolve(path))) {
                    missing.add(page + ": path " + path);
                }
            }
        }
        assertTrue(missing.isEmpty(), "the pages name paths that do not exist:\n" + String.join("\n", missing));
    }

    private static List<String> lines(String page) throws IOException {
        return Files.readAllLines(REPO.resolve(page), StandardCharsets.UTF_8);
    }

    private static void walk(String page) throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")),
                "the walk-through starts a test SLURM cluster, which needs root");
        Run r = WALKS.get(page).get(11, TimeUnit.MINUTES);
        System.out.print(r.output);
        assertEquals(0, r.status, page + ":\n" + r.output);
        assertTrue(r.output.contains("each as documented"), r.output);
    }

    private record Run(int status, String output) {}

    private static Run run(String page) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("/usr/bin/python3", "tests/docs/walkthrough.py", page)
                .directory(REPO.toFile()).redirectErrorStream(true);
        Path out = Files.createTempFile("walkthrough", ".txt");
        pb.redirectOutput(out.toFile());
        Process p = pb.start();
        try {
            if (!p.waitFor(10, TimeUnit.MINUTES)) {
                throw new AssertionError(page + ": the walk-through still runs after 10 minutes:\n"
                        + Files.readString(out));
            }
            return new Run(p.exitValue(), Files.readString(out));
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            Files.deleteIfExists(out);
        }
    }
}
