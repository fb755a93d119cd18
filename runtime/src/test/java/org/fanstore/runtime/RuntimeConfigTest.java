package org.fanstore.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The launcher's toArgs and the runtime's parse are one contract: what one writes the other reads back. */
class RuntimeConfigTest {
    static RuntimeConfig sample(RuntimeConfig.Unpack unpack, boolean other, boolean verbose) {
        return new RuntimeConfig(3, 8, "fe80::1%eth0", 45123, other ? "s3://bkt/pre/in=1.fs" : "/data/in=1.fs",
                Path.of("/tmp/f/rank-3"),
                Path.of("/dev/shm/f/rank-3"), 1L << 33, 2, "991.0", unpack, verbose,
                other ? "auto" : "50%", !verbose, other ? Path.of("/lustre/out put") : null,
                Path.of("/dev/shm/f/secret"),
                other ? RuntimeConfig.TableLoad.READ : RuntimeConfig.TableLoad.BROADCAST,
                other ? RuntimeConfig.OnNodeLoss.END : RuntimeConfig.OnNodeLoss.CONTINUE);
    }

    @ParameterizedTest
    @EnumSource(RuntimeConfig.Unpack.class)
    void parseReadsBackWhatToArgsWrites(RuntimeConfig.Unpack unpack) {
        for (boolean other : new boolean[] {false, true}) {
            RuntimeConfig c = sample(unpack, other, !other);
            assertEquals(c, RuntimeConfig.parse(c.toArgs().toArray(String[]::new)));
        }
    }

    @Test
    void argumentsAreKeyValuePairsAndBareFlags() {
        assertEquals(List.of("--rank=3", "--size=8", "--rendezvous=fe80::1%eth0:45123", "--data=/data/in=1.fs",
                        "--local-dir=/tmp/f/rank-3", "--shm-dir=/dev/shm/f/rank-3", "--cache-mb=8589934592",
                        "--replicas=2", "--job-id=991.0", "--unpack=lazy", "--verbose", "--local-capacity=50%",
                        "--prefetch=off", "--secret-file=/dev/shm/f/secret", "--table-load=broadcast",
                        "--on-node-loss=continue"),
                sample(RuntimeConfig.Unpack.LAZY, false, true).toArgs());
    }

    @Test
    void everyMissingKeyIsRefusedByName() {
        List<String> all = sample(RuntimeConfig.Unpack.EAGER, true, true).toArgs();
        for (String arg : all) {
            if (!arg.contains("=") || arg.startsWith("--output-dir=")) {
                continue; // flags and the optional output directory may be absent
            }
            List<String> args = new ArrayList<>(all);
            args.remove(arg);
            String key = arg.substring(0, arg.indexOf('='));
            assertEquals("runtime argument " + key + " is missing", refusal(args));
        }
    }

    @Test
    void withoutAnOutputDirectoryTheArgumentIsLeftOutAndReadsBackAsNone() {
        RuntimeConfig none = sample(RuntimeConfig.Unpack.LAZY, false, false);
        assertEquals(null, RuntimeConfig.parse(none.toArgs().toArray(String[]::new)).outputDir());
        assertEquals(Path.of("/lustre/out put"), RuntimeConfig.parse(sample(RuntimeConfig.Unpack.LAZY, true, false)
                .toArgs().toArray(String[]::new)).outputDir());
    }

    @Test
    void unknownRepeatedAndMalformedArgumentsAreRefusedClearly() {
        List<String> base = sample(RuntimeConfig.Unpack.BACKGROUND, false, false).toArgs();
        Map<String, String> cases = Map.of(
                "--colour=red", "unknown runtime argument --colour (are the launcher and the runtime from the same"
                        + " build?)",
                "--rank=4", "runtime argument --rank is given twice",
                "--verbose=yes", "runtime argument '--verbose=yes': --verbose takes no value",
                "rank=1", "runtime argument 'rank=1' is not --key=value");
        cases.forEach((extra, message) -> {
            List<String> args = new ArrayList<>(base);
            args.add(extra);
            assertEquals(message, refusal(args), extra);
        });
        List<String> bad = new ArrayList<>(base);
        bad.replaceAll(a -> a.startsWith("--size=") ? "--size" : a);
        assertEquals("runtime argument '--size': --size needs a value (--size=...)", refusal(bad));
        bad = new ArrayList<>(base);
        bad.replaceAll(a -> a.startsWith("--unpack=") ? "--unpack=sometimes" : a);
        assertEquals("--unpack must be one of [eager, background, lazy], got sometimes", refusal(bad));
        bad = new ArrayList<>(base);
        bad.replaceAll(a -> a.startsWith("--prefetch=") ? "--prefetch=maybe" : a);
        assertEquals("--prefetch must be on or off, got maybe", refusal(bad));
        bad = new ArrayList<>(base);
        bad.replaceAll(a -> a.startsWith("--cache-mb=") ? "--cache-mb=lots" : a);
        assertEquals("--cache-mb must be a number, got 'lots'", refusal(bad));
        bad = new ArrayList<>(base);
        bad.replaceAll(a -> a.startsWith("--rank=") ? "--rank=4294967296" : a);
        assertEquals("--rank is out of range: 4294967296", refusal(bad));
    }

    @Test
    void verboseComesFromFanstoreVerbose() {
        assertEquals(true, RuntimeConfig.verboseFrom(Map.of("FANSTORE_VERBOSE", "1")));
        assertEquals(false, RuntimeConfig.verboseFrom(Map.of("FANSTORE_VERBOSE", "yes")));
        assertEquals(false, RuntimeConfig.verboseFrom(Map.of()));
    }

    private static String refusal(List<String> args) {
        return assertThrows(IllegalArgumentException.class, () -> RuntimeConfig.parse(args.toArray(String[]::new)))
                .getMessage();
    }
}
