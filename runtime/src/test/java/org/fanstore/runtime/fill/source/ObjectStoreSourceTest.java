package org.fanstore.runtime.fill.source;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.fanstore.prep.DatasetPacker;
import org.fanstore.prep.PrepOptions;
import org.fanstore.prep.PrepProgress;
import org.fanstore.prep.format.Compression;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.prep.store.ObjectStore;
import org.fanstore.prep.store.S3ProxyServer;
import org.fanstore.prep.store.StoreCounters;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ObjectStoreSource against a real S3Proxy: a dataset made by prep, uploaded key by key, read back whole. */
class ObjectStoreSourceTest {
    @TempDir
    static Path tmp;
    static S3ProxyServer server;
    static ObjectStore store;
    static Path data;
    static Manifest manifest;
    static DatasetLocation location;
    static final Map<Integer, PartitionInfo> INFOS = new HashMap<>();

    @BeforeAll
    static void start() throws Exception {
        Path src = Files.createDirectories(tmp.resolve("src/ds"));
        Files.createDirectories(src.resolve("val"));
        Random r = new Random(43);
        for (int i = 0; i < 40; i++) {
            byte[] b = new byte[1000 + r.nextInt(600_000)];
            r.nextBytes(b);
            Files.write(src.resolve(i % 5 == 0 ? "val/v" + i : "f" + i), b);
        }
        Files.write(src.resolve("big"), new byte[20 << 20]);   // one partition above two read parts
        data = tmp.resolve("ds.fs");
        DatasetPacker.prep(new PrepOptions(src, data, null, 3, Compression.NONE, List.of("val"), 1, null, false,
                false), PrepProgress.silent(), line -> { });
        manifest = Manifest.read(data);
        for (PartitionInfo info : manifest.regularPartitions()) {
            INFOS.put(info.index(), info);
        }
        for (PartitionInfo info : manifest.broadcastPartitions()) {
            INFOS.put(-1 - info.index(), info);
        }
        server = S3ProxyServer.start(Files.createDirectories(tmp.resolve("s3")));
        store = ObjectStore.connect(server.settings());
        location = DatasetLocation.dataset("s3://" + server.bucket() + "/sets/ds.fs");
        server.upload(store, data, location.key());
    }

    @AfterAll
    static void stop() {
        S3ProxyServer.stop(store, server);
    }

    @Test
    void everyPartitionReadsBackAsTheFile() throws IOException {
        ObjectStoreSource source = new ObjectStoreSource(store, location, INFOS::get);
        assertEquals("objectstore", source.kind());
        assertTrue(manifest.broadcastPartitions().size() > 0);
        boolean large = false;
        for (Map.Entry<Integer, PartitionInfo> e : INFOS.entrySet()) {
            byte[] file = Files.readAllBytes(data.resolve(e.getValue().fileName()));
            large |= file.length > 16 << 20;
            source.check(e.getKey());
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            source.read(e.getKey(), 0, file.length, Channels.newChannel(out), false);
            assertArrayEquals(file, out.toByteArray(), e.getValue().fileName());
            out.reset();
            int from = file.length / 3;
            int len = Math.min(5000, file.length - from);
            source.read(e.getKey(), from, len, Channels.newChannel(out), true);
            assertArrayEquals(Arrays.copyOfRange(file, from, from + len), out.toByteArray());
        }
        assertTrue(large, "no partition above two read parts");
        assertTrue(store.counters().requests(StoreCounters.Kind.GET) > 0);
    }

    @Test
    void aDamagedOrMissingPartitionIsRefusedByCheck() throws IOException {
        PartitionInfo info = INFOS.get(0);
        ObjectStoreSource wrongSize = new ObjectStoreSource(store, location, p -> new PartitionInfo(info.index(),
                info.fileName(), info.bytes() + 1, info.crc32c(), info.entries(), info.broadcast()));
        IOException e = assertThrows(IOException.class, () -> wrongSize.check(0));
        assertTrue(e.getMessage().contains("damaged"), e.getMessage());
        ObjectStoreSource wrongIndex = new ObjectStoreSource(store, location, p -> INFOS.get(1).fileName()
                .equals(info.fileName()) ? info : new PartitionInfo(1, info.fileName(), info.bytes(), info.crc32c(),
                info.entries(), false));
        e = assertThrows(IOException.class, () -> wrongIndex.check(1));
        assertTrue(e.getMessage().contains("the manifest says"), e.getMessage());
        ObjectStoreSource missing = new ObjectStoreSource(store, DatasetLocation.dataset("s3://" + server.bucket()
                + "/elsewhere/ds.fs"), INFOS::get);
        e = assertThrows(IOException.class, () -> missing.check(0));
        assertTrue(e.getMessage().contains("missing from s3://"), e.getMessage());
    }
}
