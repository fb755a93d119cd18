package org.fanstore.runtime.broadcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.fanstore.prep.DatasetPacker;
import org.fanstore.prep.PrepOptions;
import org.fanstore.prep.PrepProgress;
import org.fanstore.prep.format.Compression;
import org.fanstore.prep.format.TableInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.fanstore.runtime.fetch.RankMain;
import org.fanstore.launcher.rendezvous.RendezvousServer;
import org.fanstore.runtime.world.RankProcesses;

/**
 * The metadata table's broadcast across real rank processes: a table of many MPJ messages (more chunks than a rank
 * has buffers, so every buffer is reused while the chain forwards) lands byte-identical on every rank; a table
 * rank 0 refuses is refused by every rank, with rank 0's message naming the file.
 */
class TableBroadcastProcessTest {
    private static final long RANK_TIMEOUT_MILLIS = 90_000;
    private static final int RANKS = 3;

    @TempDir
    static Path dir;

    /** A real dataset whose table spans more than WINDOW + 1 chunks: many files with long names. */
    private static Path dataset(String name) throws Exception {
        Path src = Files.createDirectories(dir.resolve("src-" + name + "/ds"));
        String longName = "x".repeat(250);   // ~300 table bytes per file (format 3): 12,000 files fill 7 chunks
        for (int d = 0; d < 12; d++) {
            Path sub = Files.createDirectories(src.resolve("d" + d));
            for (int i = 0; i < 1000; i++) {
                Files.writeString(sub.resolve(longName + i), d + "/" + i);
            }
        }
        Path data = dir.resolve(name + ".fs");
        DatasetPacker.prep(new PrepOptions(src, data, null, 4, Compression.NONE, List.of(), 1, null, false, false),
                PrepProgress.silent(), line -> { });
        long chunks = TableBroadcast.chunks(Files.size(data.resolve(TableInfo.FILE_NAME)));
        assertTrue(chunks > TableBroadcast.WINDOW + 1, "table of only " + chunks + " chunks");
        return data;
    }

    private static List<String> runRanks(Path data, Path out, String... extra) throws Exception {
        Files.createDirectories(out);
        try (RendezvousServer server =
                        RendezvousServer.start(InetAddress.getLoopbackAddress(), RANKS, RankMain.JOIN_SECRET,
                                Duration.ofSeconds(30));
                RankProcesses ranks = new RankProcesses(out)) {
            String endpoint = server.host() + ":" + server.port();
            List<Process> ps = new ArrayList<>();
            for (int r = 0; r < RANKS; r++) {
                List<String> args = new ArrayList<>(List.of("" + r, "" + RANKS, endpoint, data.toString(),
                        out.toString()));
                args.addAll(List.of(extra));
                ps.add(ranks.start(r, TableRankMain.class, args.toArray(new String[0])));
            }
            server.awaitCompletion();
            List<String> outputs = new ArrayList<>();
            for (int r = 0; r < RANKS; r++) {
                int code = ranks.exitCode(ps.get(r), RANK_TIMEOUT_MILLIS);
                String output = ranks.output(r);
                assertEquals(0, code, "rank " + r + ":\n" + output);
                outputs.add(output);
            }
            return outputs;
        }
    }

    @Test
    @Timeout(180)
    void aTableOfManyMessagesLandsByteIdenticalOnEveryRank() throws Exception {
        Path data = dataset("many");
        long bytes = Files.size(data.resolve(TableInfo.FILE_NAME));
        List<String> outputs = runRanks(data, dir.resolve("out-many"));
        for (int r = 0; r < RANKS; r++) {
            assertTrue(outputs.get(r).contains("LANDED_OK " + bytes), "rank " + r + ":\n" + outputs.get(r));
            assertTrue(outputs.get(r).contains("FINALIZED true"), outputs.get(r));
        }
    }

    /**
     * The same with 512 KiB windows (TableMapping's test knob), so rank 0 reads through a 2 MiB buffer that it refills
     * while chunks travel (the default is 8 MiB, more than this table) and every rank lands across windows.
     */
    @Test
    @Timeout(180)
    void aTableLandsByteIdenticalThroughSmallWindowsAndARefilledReadBuffer() throws Exception {
        Path data = dataset("small-windows");
        long bytes = Files.size(data.resolve(TableInfo.FILE_NAME));
        assertTrue(bytes > (2 << 20), "the table must outgrow the 2 MiB read buffer: " + bytes);
        List<String> outputs = runRanks(data, dir.resolve("out-small-windows"), "19");
        for (int r = 0; r < RANKS; r++) {
            assertTrue(outputs.get(r).contains("LANDED_OK " + bytes), "rank " + r + ":\n" + outputs.get(r));
        }
    }

    @Test
    @Timeout(180)
    void aTableRankZeroRefusesIsRefusedByEveryRankNamingTheFile() throws Exception {
        Path data = dataset("doctored");
        Path table = data.resolve(TableInfo.FILE_NAME);
        byte[] bytes = Files.readAllBytes(table);
        bytes[bytes.length - 3] ^= 0x40;    // a body record: only the CRC can tell
        Files.write(table, bytes);
        List<String> outputs = runRanks(data, dir.resolve("out-doctored"));
        for (int r = 0; r < RANKS; r++) {
            String out = outputs.get(r);
            assertTrue(out.contains("LANDING_FAILED " + table + " has CRC32C"), "rank " + r + ":\n" + out);
            assertTrue(out.contains("fanstore upgrade " + data), out);
            assertTrue(out.contains("FINALIZED true"), out);
            assertTrue(Files.notExists(dir.resolve("out-doctored/meta-" + r + ".tbl"))
                    && Files.notExists(dir.resolve("out-doctored/meta-" + r + ".tbl.tmp")), "nothing landed");
        }
    }
}
