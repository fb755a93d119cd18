package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.FileModes.S_IFDIR;
import static org.fanstore.prep.format.FileModes.S_IFLNK;
import static org.fanstore.prep.format.FileModes.S_IFREG;
import static java.nio.ByteOrder.LITTLE_ENDIAN;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Builds the shared test vectors in {@code tests/vectors/metadata/}: {@code basic.tbl} with {@code basic.expect}
 * (every entry's expected answers, computed here from the namespace model, not by reading the table back, plus
 * lookups that must miss), and malformed tables listed in {@code malformed.expect} that every reader must refuse.
 * Deterministic: regenerating must reproduce the committed files byte for byte.
 */
final class MetadataVectors {
    static final String BASIC = "basic.tbl";
    static final byte[] LOCAL_ROOT = "/var/tmp/fanstore-local".getBytes(US_ASCII);
    static final int RANK = 1;
    static final int WORLD_SIZE = 2;
    static final int ST_DEV = 0x2a;
    static final long GENERATION = 0x0102030405060708L;
    static final int REPLICAS = 0;
    static final int PARTITIONS = 4;
    static final int BROADCAST_PARTITIONS = 1;
    static final long DATASET_ID = 0x1122334455667788L;
    static final int COLLIDING = 3;
    /** A table whose version word says its entries are 80 bytes: what a build with a grown fs_entry writes. */
    static final String OTHER_ENTRY_SIZE = "entry-size-80.tbl";
    static final int OTHER_ENTRY_SIZE_VERSION = FORMAT_VERSION << 24 | 80 << 8 | HEADER_LENGTH;

    private MetadataVectors() {
    }

    /** Writes every vector file into {@code dir}; returns the names written. */
    static List<String> writeAll(final Path dir) throws IOException {
        Files.createDirectories(dir);
        final List<NamespaceEntry> namespace = basicNamespace(dir);
        write(dir.resolve(BASIC), namespace);
        final byte[] table = Files.readAllBytes(dir.resolve(BASIC));
        final String basicExpect = expectations(namespace, table);
        Files.writeString(dir.resolve("basic.expect"), basicExpect, US_ASCII);
        Files.writeString(dir.resolve(FarVector.NAME), FarVector.image(table), US_ASCII);
        final Path far = dir.resolve("far.expanded");
        FarVector.expand(dir.resolve(FarVector.NAME), far);
        try {
            Files.writeString(dir.resolve("far.expect"), FarVector.expectations(basicExpect, far), US_ASCII);
        } finally {
            Files.delete(far);
        }
        final List<String> names = new ArrayList<>(List.of(BASIC, "basic.expect", FarVector.NAME, "far.expect"));
        final StringBuilder malformed = new StringBuilder("# tables every reader must refuse (open fails, no crash)\n");
        for (final Map.Entry<String, byte[]> bad : MalformedVectors.of(table, dir.resolve(BASIC)).entrySet()) {
            Files.write(dir.resolve(bad.getKey()), bad.getValue());
            malformed.append("reject ").append(bad.getKey()).append('\n');
            names.add(bad.getKey());
        }
        Files.writeString(dir.resolve("malformed.expect"), malformed, US_ASCII);
        names.add("malformed.expect");
        return names;
    }

    /** The landed table of {@code namespace} as rank RANK of WORLD_SIZE: the dataset's table plus the job area. */
    static void write(final Path target, final List<NamespaceEntry> namespace) throws IOException {
        final Path dataset = target.resolveSibling(target.getFileName() + ".dataset");
        MetadataTableWriter.write(dataset, namespace, DATASET_ID, PARTITIONS, BROADCAST_PARTITIONS, ST_DEV);
        final int crc;
        try (MetadataTable t = MetadataTable.openDataset(dataset)) {
            crc = t.recordedCrc();
        }
        LandedTable.copy(dataset, target, crc, RANK, WORLD_SIZE, REPLICAS, LOCAL_ROOT, GENERATION);
        Files.delete(dataset);
    }

    /** A regular file in {@code partition}, with body details derived from its key so each is distinct. */
    static NamespaceEntry file(final byte[] key, final int perms, final long size, final long sec, final int nsec,
        final int uid, final int gid, final int flags, final int partition) {
        final boolean compressed = (flags & FLAG_COMPRESSED) != 0;
        return new NamespaceEntry(key, S_IFREG | perms, size, sec, nsec, uid, gid, flags, partition, null,
            4096L * key.length, compressed ? size + 3 : size, Fnv1a64.hash(key) == 0 ? 1 : (int)Fnv1a64.hash(key),
            (flags & FLAG_COMPRESSED) != 0 ? 1 : 0);
    }

    static NamespaceEntry dir(final byte[] key, final int perms, final long sec, final int nsec, final int uid,
        final int gid) {
        return new NamespaceEntry(key, S_IFDIR | perms, 0, sec, nsec, uid, gid, 0, NO_PARTITION, null, 0, 0, 0, 0);
    }

    static byte[] bytes(final String s) {
        return s.getBytes(US_ASCII);
    }

    /** The basic namespace, with COLLIDING keys under dataset/collide sharing one home bucket. */
    static List<NamespaceEntry> basicNamespace(final Path scratch) throws IOException {
        final List<NamespaceEntry> fixed = new ArrayList<>();
        // Rank 1 of 2, no replicas: it holds the odd regular partitions and the broadcast one.
        fixed.add(dir(bytes("dataset"), 0750, 1_700_000_000L, 500, 1000, 100));
        fixed.add(dir(bytes("dataset/empty"), 0755, 1_700_000_001L, 0, 1000, 100));
        fixed.add(file(bytes("dataset/train/n01/a.jpg"), 0644, 0, 1_700_000_002L, 7, 1000, 100, FLAG_UNPACKABLE, 1));
        fixed.add(file(bytes("dataset/train/n01/b.jpg"), 0644, 1234, 1_700_000_003L, 999_999_999, 1000, 100,
            FLAG_COMPRESSED, 0));
        fixed.add(file(bytes("dataset/train/n02/c.bin"), 0600, 5_000_000_000L, -5L, 0, 0, 0, 0, 3));
        fixed.add(new NamespaceEntry(bytes("dataset/link"), S_IFLNK | 0777, 0, 1_700_000_004L, 0, 1000, 100, 0,
            NO_PARTITION, bytes("train/n01/b.jpg"), 0, 0, 0, 0));
        fixed.add(file(new byte[]{'d', 'a', 't', 'a', 's', 'e', 't', '/', (byte)0xff, (byte)0xfe, 'x',
            (byte)0x80, '.', 'b', 'i', 'n'}, 0644, 17, 1_600_000_000L, 0, 1000, 100, FLAG_UNPACKABLE, 3));
        // '-' sorts before '/', so "a-b" lies between "a" and "a/x" in key order.
        fixed.add(file(bytes("dataset/a-b"), 0644, 3, 1_700_000_005L, 0, 1000, 100, 0, 0));
        fixed.add(file(bytes("dataset/a/x"), 0644, 4, 1_700_000_006L, 0, 1000, 100, FLAG_UNPACKABLE, -1));
        fixed.add(file(bytes("dataset/long/" + "d".repeat(120) + "/" + "e".repeat(120) + "/" +
            "f".repeat(80) + ".dat"), 0644, 99, 1_700_000_007L, 0, 1000, 100, 0, 0));
        fixed.add(file(bytes("other/readme.txt"), 0444, 42, 1_700_000_008L, 0, 0, 0, FLAG_UNPACKABLE, 2));
        fixed.add(file(bytes("top.txt"), 0644, 5, 1_700_000_009L, 0, 0, 0, 0, 0));
        // ImageNet's shape: names that repeat their directory's name store only the rest (NAME_EXTENDS_PARENT),
        // but not under a directory whose own name does so (n01x), and not when equal to it (n02/n02).
        fixed.add(file(bytes("dataset/train/n01/n01_3.jpg"), 0644, 300, 1_700_000_011L, 0, 1000, 100,
            FLAG_UNPACKABLE, 1));
        fixed.add(file(bytes("dataset/train/n01/n01x/n01x_9.jpg"), 0644, 301, 1_700_000_012L, 0, 1000, 100, 0, 1));
        fixed.add(new NamespaceEntry(bytes("dataset/train/n01/n01_link"), S_IFLNK | 0777, 0, 1_700_000_013L, 0,
            1000, 100, 0, NO_PARTITION, bytes("n01_3.jpg"), 0, 0, 0, 0));
        fixed.add(file(bytes("dataset/train/n02/n02"), 0644, 302, 1_700_000_014L, 0, 1000, 100, 0, 2));

        // The bucket count depends only on the entry count: learn it once with placeholder names, then pick names
        // that share a home bucket (the count, hence the bucket count, stays the same).
        final Path probe = scratch.resolve("collision-probe.tbl");
        final List<NamespaceEntry> withPlaceholders = new ArrayList<>(fixed);
        for (int i = 0; i < COLLIDING; i++) {
            withPlaceholders.add(collideEntry(bytes("dataset/collide/p" + i)));
        }
        MetadataTableWriter.write(probe, withPlaceholders, DATASET_ID, PARTITIONS, BROADCAST_PARTITIONS, ST_DEV);
        final long buckets =
            ByteBuffer.wrap(Files.readAllBytes(probe)).order(LITTLE_ENDIAN).getLong(BUCKET_COUNT_OFFSET);
        Files.delete(probe);
        final List<NamespaceEntry> all = new ArrayList<>(fixed);
        for (final byte[] key : keysInOneBucket("dataset/collide/k", COLLIDING, buckets, -1)) {
            all.add(collideEntry(key));
        }
        return all;
    }

    /** The first {@code count} keys prefix+N sharing a home bucket (that of {@code home}, or any when -1). */
    static List<byte[]> keysInOneBucket(final String prefix, final int count, final long buckets, final long home) {
        final Map<Long, List<byte[]>> byBucket = new TreeMap<>();
        for (int n = 0; ; n++) {
            final byte[] key = bytes(prefix + n);
            final long bucket = homeBucket(Fnv1a64.hash(key), buckets);
            if (home >= 0 && bucket != home) {
                continue;
            }
            final List<byte[]> group = byBucket.computeIfAbsent(bucket, b -> new ArrayList<>());
            group.add(key);
            if (group.size() == count) {
                return group;
            }
        }
    }

    private static NamespaceEntry collideEntry(final byte[] key) {
        return file(key, 0644, 8, 1_700_000_010L, 0, 1000, 100, 0, 0);
    }

    /** One line per entry with every field a reader reports, from the model alone; then lookups that must miss. */
    static String expectations(final List<NamespaceEntry> namespace, final byte[] table) {
        final NamespaceModel model = new NamespaceModel(namespace);
        final ByteBuffer header = ByteBuffer.wrap(table).order(LITTLE_ENDIAN);
        final long buckets = header.getLong(BUCKET_COUNT_OFFSET);
        final StringBuilder sb = new StringBuilder();
        sb.append("# fanstore metadata table vectors, generated by MetadataVectors (runtime tests): do not edit.\n");
        sb.append("# entry: key and names/targets in hex; mode octal; children are names in order ('-': not a dir);\n");
        sb.append("# flags: the entry's flag byte (bit 1 NAME_EXTENDS_PARENT); stored: the name bytes it holds;\n");
        sb.append("# body_offset, stored_length, body_crc: regular files (0 otherwise); hash: FNV-1a 64 of the key.\n");
        sb.append("table ").append(BASIC).append('\n');
        sb.append("header entries=").append(model.size()).append(" buckets=").append(buckets)
            .append(" rank=").append(RANK).append(" world=").append(WORLD_SIZE).append(" st_dev=").append(ST_DEV)
            .append(" generation=").append(GENERATION).append(" local_root=").append(KeyText.hex(LOCAL_ROOT))
            .append(" total=").append(table.length).append(" replicas=").append(REPLICAS)
            .append(" table_len=").append(header.getLong(TABLE_LENGTH_OFFSET))
            .append(" crc=").append(String.format("%08x", header.getInt(CRC_OFFSET)))
            .append(" partitions=").append(PARTITIONS).append(" broadcast=").append(BROADCAST_PARTITIONS)
            .append(" attributes=").append(header.getLong(ATTRIBUTE_COUNT_OFFSET))
            .append(" dataset_id=").append(String.format("%016x", DATASET_ID)).append('\n');
        for (int i = 0; i < model.size(); i++) {
            sb.append("# ").append(KeyText.of(model.key(i))).append('\n');
            final NamespaceModel.Row r = model.row(i);
            final int p = r.partition();
            final boolean held = p != NO_PARTITION &&
                (p < 0 || Math.floorMod(RANK - p % WORLD_SIZE, WORLD_SIZE) <= REPLICAS);
            sb.append(model.line(i)).append(" local_raw=").append((r.flags() & FLAG_UNPACKABLE) != 0 && held ? 1 : 0)
                .append('\n');
        }
        final List<byte[]> absent = new ArrayList<>(List.of(bytes("dataset/missing"), bytes("dataset/train/n01"
            + "/a.jpg/"), bytes("/dataset"), bytes("datase"), bytes("dataset/train/n01/a.jpgx"), bytes("Dataset"),
            bytes("dataset/train/n01/_3.jpg"), bytes("dataset/train/n01/n01"), bytes("dataset/train/n01/n01x_9.jpg"),
            bytes("dataset/train/n01/n01x/x_9.jpg"), bytes("dataset/train/n01x"), bytes("n01_3.jpg"),
            bytes("dataset/train//n01"), bytes("dataset/train/n01/n01n01_3.jpg")));
        final byte[] firstColliding = model.keysWithPrefix("dataset/collide/").get(0);
        absent.add(keysInOneBucket("dataset/collide/absent", 1, buckets, homeBucket(Fnv1a64.hash(firstColliding),
            buckets)).get(0));
        for (final byte[] key : absent) {
            sb.append("# ").append(KeyText.of(key)).append(" (absent)\n");
            sb.append("absent key=").append(KeyText.hex(key)).append('\n');
        }
        return sb.toString();
    }
}
