package org.fanstore.runtime.broadcast;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;

import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.prep.format.table.MetadataTableDescriptor;
import org.fanstore.runtime.fetch.RankMain;
import org.fanstore.runtime.metadata.TableLanding;
import org.fanstore.runtime.world.MpiWorld;

/**
 * One rank landing a dataset's metadata table through {@link TableLanding} (rank 0 reads and broadcasts it, the
 * others receive it down the chain), then checking its landed copy byte for byte against the dataset's file: every
 * byte of the table but the job area identical, the job area its own (rank, world), its local root after the table.
 * Prints {@code LANDED_OK <table bytes>} or {@code LANDING_FAILED <message>} and exits 0 either way (the test reads
 * which).
 *
 * <p>Usage: {@code TableRankMain <rank> <size> <endpoint> <dataset dir> <out dir> [window shift]} (a shift maps the
 * table in windows of that stride and reads it through a buffer of the stride or 2 MiB: TableMapping's test knob).
 */
public final class TableRankMain {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private TableRankMain() {
    }

    public static void main(String[] args) {
        try {
            if (args.length > 5) {
                System.setProperty(org.fanstore.prep.format.table.TableMapping.SHIFT_PROPERTY, args[5]);
            }
            System.exit(run(Integer.parseInt(args[0]), Integer.parseInt(args[1]), args[2], Path.of(args[3]),
                    Path.of(args[4])));
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static int run(int rank, int size, String endpoint, Path dataset, Path out) throws Exception {
        MpiWorld world = RankMain.join(rank, size, endpoint);
        Manifest manifest = Manifest.read(dataset);
        Path landed = out.resolve("meta-" + rank + ".tbl");
        byte[] root = ("/local/rank-" + rank).getBytes(StandardCharsets.UTF_8);
        try (MetadataTable table = TableLanding.land(world, dataset, manifest, landed, rank, size, 0, root, false,
                TIMEOUT)) {
            byte[] want = Files.readAllBytes(dataset.resolve(manifest.table().fileName()));
            byte[] got = Files.readAllBytes(landed);
            int job = MetadataTableDescriptor.JOB_AREA_OFFSET;
            int header = MetadataTableDescriptor.HEADER_LENGTH;
            boolean same = got.length > want.length
                    && Arrays.equals(want, 0, job, got, 0, job)
                    && Arrays.equals(want, header, want.length, got, header, want.length);
            ByteBuffer h = ByteBuffer.wrap(got).order(ByteOrder.LITTLE_ENDIAN);
            boolean jobArea = h.getInt(MetadataTableDescriptor.RANK_OFFSET) == rank
                    && h.getInt(MetadataTableDescriptor.WORLD_SIZE_OFFSET) == size
                    && Arrays.equals(table.localRoot(), root) && table.tableLength() == want.length;
            System.out.println(same && jobArea ? "LANDED_OK " + want.length
                    : "LANDED_WRONG same=" + same + " jobArea=" + jobArea);
        } catch (java.io.IOException e) {
            System.out.println("LANDING_FAILED " + e.getMessage());
        }
        world.barrier(TIMEOUT);
        System.out.println("FINALIZED " + world.finalizeWorld(Duration.ofSeconds(10)));
        System.out.flush();
        return 0;
    }
}
