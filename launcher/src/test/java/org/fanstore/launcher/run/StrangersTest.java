package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35, part B (docs/reliability.md, "Strangers and overload"): another local user, created here with
 * {@code useradd} and removed after, attacks every TCP port of a starting and then of a running job (silent
 * connections, garbage, niodev's greeting claiming ranks, a forged join, floods; {@code hostile/stranger.py},
 * loopback only, bounded in count and time); the job must finish with exit 0 and every byte right. Four jobs
 * started at once on this machine must all succeed (2 rounds; 20 with {@code FANSTORE_SOAK=1}).
 */
class StrangersTest {
    private static final Pattern RENDEZVOUS = Pattern.compile("--rendezvous=([0-9.]+):([0-9]+)");
    /** Connections one flooding process of the stranger makes at most (4 per port). */
    private static final int FLOOD_LIMIT = 200_000;

    @TempDir
    static Path work;
    private static SampleDataset data;
    private static String stranger;

    @BeforeAll
    static void setUp() throws Exception {
        data = SampleDataset.make(work, "ds", 24, 35);
    }

    @AfterAll
    static void removeStranger() throws Exception {
        if (stranger != null) {
            run(List.of("userdel", stranger));
        }
    }

    @Test
    void aSecondUserCannotEndStallOrMisleadAStartingOrARunningJob() throws Exception {
        createStranger();
        String job = "tstranger" + System.nanoTime();
        Path go = work.resolve(job + ".go");
        FaultsTest.Job j = FaultsTest.Job.start(data.data(), work, Map.of("FANSTORE_JOB_ID", job),
                List.of("--ranks", "2"), "i=0; while [ ! -e " + go + " ] && [ $i -lt 600 ]; do sleep 0.1;"
                        + " i=$((i+1)); done; " + data.readEverything());
        try {
            // starting: the rendezvous port is on every runtime's command line, readable by anyone in /proc
            int rendezvous = awaitRendezvousPort(j);
            // The runtimes are held (SIGSTOP, within ms of appearing: a JVM takes hundreds of ms to join) so the
            // rendezvous is still open while the stranger attacks it, however fast this machine starts a job; the
            // launcher's rendezvous waits for them (its join deadline is 60 s).
            List<ProcessHandle> held = jobProcesses(j).stream().filter(p -> p.pid() != j.launcher.pid()).toList();
            signal("STOP", held);
            String startReport;
            try {
                startReport = finish(attack(List.of(rendezvous), 4));
            } finally {
                signal("CONT", held);
            }
            j.awaitReady(2);
            assertTrue(connected(startReport) > 0, "the stranger never reached the rendezvous: " + startReport);

            // running: every port the job's processes listen on
            List<Listener> listeners = new ArrayList<>();
            for (ProcessHandle p : jobProcesses(j)) {
                listeners.addAll(listening(p.pid()));
            }
            assertTrue(listeners.size() >= 2, "expected each rank's liveness port, found " + listeners);
            for (Listener l : listeners) { // item 7: nothing on every interface, so no other host reaches the job
                assertTrue(l.address().isLoopbackAddress(), "a job process listens on " + l + " in --ranks mode");
            }
            // 6 s: each rank's watchdog probes its peer 6 times under the flood
            Process running = attack(listeners.stream().map(Listener::port).distinct().toList(), 6);
            String runReport = finish(running);
            assertTrue(connected(runReport) > 0, "the stranger never reached the running job: " + runReport);
            assertTrue(j.launcher.isAlive(), () -> "the job ended under attack:\n" + j.stderr());
            Files.createFile(go);
            assertTrue(j.launcher.waitFor(120, TimeUnit.SECONDS), () -> "job still running:\n" + j.stderr());
            assertEquals(0, j.launcher.exitValue(), j.stderr());
            assertEquals(2, data.tasksThatReadEverything(j.stdout()), j.stdout() + "\n" + j.stderr());
            assertTrue(FaultsTest.gone(job, work), "directories left behind");
            System.out.println("strangers: at start " + startReport + "; running " + runReport);
        } finally {
            j.kill();
        }
    }

    @Test
    void fourJobsStartedAtOnceOnOneMachineAllSucceed() throws Exception {
        int rounds = "1".equals(System.getenv("FANSTORE_SOAK")) ? 20 : 2;
        for (int round = 0; round < rounds; round++) {
            List<FaultsTest.Job> jobs = new ArrayList<>();
            try {
                for (int i = 0; i < 4; i++) {
                    jobs.add(FaultsTest.Job.start(data.data(), work, Map.of("FANSTORE_JOB_ID",
                            "tfour" + round + "x" + i + "x" + System.nanoTime()), List.of("--ranks", "2"),
                            data.readEverything()));
                }
                for (FaultsTest.Job j : jobs) {
                    assertTrue(j.launcher.waitFor(240, TimeUnit.SECONDS), () -> "job still running:\n" + j.stderr());
                    int r = round;
                    assertEquals(0, j.launcher.exitValue(), () -> "round " + r + ": " + j.stderr());
                    assertEquals(2, data.tasksThatReadEverything(j.stdout()), j.stdout() + "\n" + j.stderr());
                    assertTrue(FaultsTest.gone(j.jobId, work), "directories left behind");
                }
            } finally {
                jobs.forEach(FaultsTest.Job::kill);
            }
        }
        System.out.println("four jobs at once: " + rounds + " rounds, all exit 0 with every byte right");
    }

    /** A user of our own for the test; the machine runs the suite as root (useradd needs it). */
    private static void createStranger() throws Exception {
        Assumptions.assumeTrue(JobLayout.currentUid() == 0, "needs root to create a second user");
        if (stranger == null) {
            String name = "fsx" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
            assertEquals(0, run(List.of("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name)),
                    "useradd " + name);
            stranger = name;
        }
    }

    /** The stranger's script, run as the stranger, against {@code ports} for {@code seconds}. */
    private static Process attack(List<Integer> ports, int seconds) throws IOException {
        Path script = work.resolve("stranger.py");
        if (!Files.exists(script)) {
            try (InputStream in = StrangersTest.class.getResourceAsStream("/hostile/stranger.py")) {
                Files.write(script, in.readAllBytes());
            }
        }
        List<String> ps = ports.stream().map(String::valueOf).toList();
        return new ProcessBuilder("runuser", "-u", stranger, "--", "python3", "-", String.join(",", ps),
                Integer.toString(seconds), Integer.toString(FLOOD_LIMIT))
                .redirectInput(script.toFile()).redirectErrorStream(true).start();
    }

    private static void signal(String name, List<ProcessHandle> processes) throws Exception {
        for (ProcessHandle p : processes) {
            new ProcessBuilder("kill", "-" + name, Long.toString(p.pid())).inheritIO().start().waitFor();
        }
    }

    private static String finish(Process attack) throws Exception {
        assertTrue(attack.waitFor(60, TimeUnit.SECONDS), "the stranger's script did not end");
        String out = new String(attack.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertEquals(0, attack.exitValue(), out);
        return out;
    }

    private static int connected(String report) {
        Matcher m = Pattern.compile("connected=(\\d+)").matcher(report);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    private static int awaitRendezvousPort(FaultsTest.Job j) throws Exception {
        int[] port = {0};
        Await.until(Duration.ofSeconds(60), () -> {
            for (ProcessHandle p : jobProcesses(j)) {
                Optional<String> c = p.info().commandLine();
                Matcher m = RENDEZVOUS.matcher(c.orElse(""));
                if (m.find()) {
                    port[0] = Integer.parseInt(m.group(2));
                    return true;
                }
            }
            return !j.launcher.isAlive();
        }, "no runtime with a rendezvous address on its command line");
        assertTrue(port[0] > 0, () -> "job ended early:\n" + j.stderr());
        return port[0];
    }

    /** The launcher and its runtimes (java processes), not the user's command. */
    private static List<ProcessHandle> jobProcesses(FaultsTest.Job j) {
        List<ProcessHandle> all = new ArrayList<>();
        all.add(j.launcher.toHandle());
        j.launcher.descendants().filter(p -> p.info().command().orElse("").endsWith("java")).forEach(all::add);
        return all;
    }

    record Listener(InetAddress address, int port) {
    }

    /** The TCP sockets process {@code pid} listens on, from /proc/PID/fd and /proc/PID/net/tcp{,6}. */
    static List<Listener> listening(long pid) throws IOException {
        Set<String> inodes = new HashSet<>();
        try (var fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            for (Path fd : fds.toList()) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[")) {
                        inodes.add(target.substring(8, target.length() - 1));
                    }
                } catch (IOException closedMeanwhile) {
                    // a descriptor closed while we listed them
                }
            }
        }
        List<Listener> out = new ArrayList<>();
        for (String table : new String[] {"tcp", "tcp6"}) {
            List<String> lines = Files.readAllLines(Path.of("/proc", Long.toString(pid), "net", table));
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.trim().split("\\s+");
                if (f[3].equals("0A") && inodes.contains(f[9])) { // 0A: LISTEN
                    String[] local = f[1].split(":");
                    out.add(new Listener(address(local[0]), Integer.parseInt(local[1], 16)));
                }
            }
        }
        return out;
    }

    /** /proc/net/tcp's hex address: 32-bit words in host (little-endian) order. */
    private static InetAddress address(String hex) throws IOException {
        byte[] b = new byte[hex.length() / 2];
        for (int word = 0; word < b.length / 4; word++) {
            for (int i = 0; i < 4; i++) {
                int at = word * 8 + (3 - i) * 2;
                b[word * 4 + i] = (byte) Integer.parseInt(hex.substring(at, at + 2), 16);
            }
        }
        return InetAddress.getByAddress(b);
    }

    private static int run(List<String> cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        return p.waitFor(30, TimeUnit.SECONDS) ? p.exitValue() : -1;
    }
}
