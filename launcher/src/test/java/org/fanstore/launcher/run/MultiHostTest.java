package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two hosts stood in for by two network namespaces joined by a veth pair (198.18.N.1/30 and .2/30, addresses
 * this test assigns and removes). One `fanstore run` per host in SLURM mode: the MPJ rendezvous, the metadata
 * all-gather and every remote fetch cross the veth, as between two real nodes. Needs root (CI runs as root);
 * skipped with a reason otherwise.
 */
class MultiHostTest {
    @TempDir
    Path work;

    private final String tag = Long.toString(ProcessHandle.current().pid() % 100_000);
    private final String nsA = "fsa-" + tag;
    private final String nsB = "fsb-" + tag;

    @AfterEach
    void removeNamespaces() throws Exception {
        ip("netns", "del", nsA);
        ip("netns", "del", nsB);
    }

    @Test
    void twoHostsOverVethReadEveryFile() throws Exception {
        int net = (int) (ProcessHandle.current().pid() % 250);
        assumeTrue(ip("netns", "add", nsA) == 0 && ip("netns", "add", nsB) == 0,
                "needs root and `ip netns` (iproute2) to make the test hosts");
        String va = "va" + tag;
        String vb = "vb" + tag;
        assertEquals(0, ip("link", "add", va, "type", "veth", "peer", "name", vb));
        assertEquals(0, ip("link", "set", va, "netns", nsA));
        assertEquals(0, ip("link", "set", vb, "netns", nsB));
        assertEquals(0, ip("-n", nsA, "addr", "add", "198.18." + net + ".1/30", "dev", va));
        assertEquals(0, ip("-n", nsB, "addr", "add", "198.18." + net + ".2/30", "dev", vb));
        for (String[] up : new String[][] {{nsA, va}, {nsB, vb}, {nsA, "lo"}, {nsB, "lo"}}) {
            assertEquals(0, ip("-n", up[0], "link", "set", up[1], "up"));
        }

        Path src = work.resolve("src/mh");
        Random rnd = new Random(11);
        List<String> keys = new ArrayList<>();
        Map<String, String> expected = new HashMap<>();
        for (int i = 0; i < 16; i++) {
            byte[] body = new byte[1 + rnd.nextInt(600_000)];
            rnd.nextBytes(body);
            Path f = src.resolve("d" + (i % 3) + "/f" + i);
            Files.createDirectories(f.getParent());
            Files.write(f, body);
            keys.add("mh/d" + (i % 3) + "/f" + i);
            expected.put(keys.get(i), String.format("%016x %d", RunJobTest.fnv(body), body.length));
        }
        Files.write(work.resolve("keys"), keys, StandardCharsets.UTF_8);
        Path data = work.resolve("mh.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                data.toString(), "--partitions", "6", "--compress", "lz4"));
        long before = vethBytes(nsB, vb);

        String job = "mh" + System.nanoTime() % 1_000_000_000L;
        ExecutorService pool = Executors.newFixedThreadPool(2);
        List<CompletableFuture<FanstoreProcess.Result>> hosts = new ArrayList<>();
        String[] namespaces = {nsA, nsB};
        for (int node = 0; node < 2; node++) {
            int n = node;
            hosts.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return FanstoreProcess.runIn(new String[] {"ip", "netns", "exec", namespaces[n]}, work,
                            Map.of("SLURM_JOB_ID", job, "SLURM_STEP_ID", "0", "SLURM_PROCID", Integer.toString(n),
                                    "SLURM_NTASKS", "2", "SLURM_NNODES", "2", "SLURM_NODEID", Integer.toString(n),
                                    "SLURM_LOCALID", "0", "SLURM_TASKS_PER_NODE", "1(x2)"),
                            180, "run", "--data", data.toString(), "--local-dir", work.toString(),
                            "--rendezvous-dir", work.resolve("rv").toString(), "--", "sh", "-c",
                            RunJobTest.client() + " \"$FANSTORE_SHM_DIR\" " + work.resolve("keys"));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, pool));
        }
        pool.shutdown();
        for (int node = 0; node < 2; node++) {
            FanstoreProcess.Result r = hosts.get(node).get(200, TimeUnit.SECONDS);
            assertEquals(0, r.status(), "host " + node + ":\n" + r.stderr());
            Map<String, String> got = new HashMap<>();
            for (String line : r.stdout().split("\n")) {
                String[] f = line.split(" ", 3);
                if (f.length == 3) {
                    got.put(f[2], f[0] + " " + f[1]);
                }
            }
            assertEquals(expected, got, "host " + node);
        }
        long crossed = vethBytes(nsB, vb) - before;
        assertTrue(crossed > 1_000_000, "only " + crossed + " bytes crossed the veth: the fetches did not");
    }

    private static long vethBytes(String ns, String dev) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("ip", "netns", "exec", ns, "cat",
                "/sys/class/net/" + dev + "/statistics/rx_bytes").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        p.waitFor(10, TimeUnit.SECONDS);
        return Long.parseLong(out);
    }

    private static int ip(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add("ip");
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        return p.waitFor(10, TimeUnit.SECONDS) ? p.exitValue() : -1;
    }
}
