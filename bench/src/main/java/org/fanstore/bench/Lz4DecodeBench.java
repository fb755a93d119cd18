package org.fanstore.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
import org.fanstore.prep.format.DiscardChannel;
import org.fanstore.prep.format.Lz4DirectDecoder;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PartitionReader;
import org.fanstore.runtime.fill.PositionalSink;
import org.fanstore.runtime.fileblocks.Preallocate;

/**
 * The LZ4 decoder alone on the bodies of a prepared dataset: every LZ4 body whose raw size is SIZE, read from the
 * partition files (warm in the page cache), decoded and CRC-checked by {@link Lz4DirectDecoder} (what the runtime
 * runs per open) into a sink that keeps nothing, on THREADS threads, each body once per round. Prints one line
 * per round, then the best: the ceiling of a first pass through fanstore on this data. MODE: {@code direct} (the
 * default), and two that also materialise each file in OUT_DIR and unlink it, as the runtime's cache does:
 * {@code write} (the runtime's way: decoded off-heap, one write) and {@code mmap} (decoded straight into a mapping
 * of the new file; bodies of one chunk only); and {@code arena}, the runtime's decoded copy (docs/slices.md): every
 * body decoded into its place in one new sparse file in OUT_DIR per round (each from a 4 KiB boundary), removed after
 * the round, its blocks allocated up front as the runtime's are ({@link Preallocate}; {@code arena-sparse}: left
 * sparse, as before that). So {@code arena} pays what a first pass pays on top of the decoder: new page-cache pages.
 *
 * <pre>java -cp ... org.fanstore.bench.Lz4DecodeBench DATASET_DIR SIZE_BYTES THREADS ROUNDS [MODE [OUT_DIR]]</pre>
 */
public final class Lz4DecodeBench {
    private static final LZ4SafeDecompressor DECOMPRESSOR = LZ4Factory.fastestInstance().safeDecompressor();

    private Lz4DecodeBench() {
    }

    private record Body(Path partition, long offset, long stored, long raw, int crc) {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        long size = Long.parseLong(args[1]);
        int threads = Integer.parseInt(args[2]);
        int rounds = Integer.parseInt(args[3]);
        String mode = args.length > 4 ? args[4] : "direct";
        Path outDir = Path.of(args.length > 5 ? args[5] : "/dev/shm");
        List<Body> bodies = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : files.filter(f -> f.toString().endsWith(".fsp")).sorted().toList()) {
                try (PartitionReader r = PartitionReader.open(p)) {
                    for (PartitionEntry e : r.entries()) {
                        if (e.isFile() && e.codec() == PartitionDescriptor.CODEC_LZ4_CHUNKED && e.rawLength() == size) {
                            bodies.add(new Body(p, e.bodyOffset(), e.storedLength(), e.rawLength(), e.crc32c()));
                        }
                    }
                }
            }
        }
        if (bodies.isEmpty()) {
            System.err.println("no LZ4 bodies of " + size + " bytes in " + dir);
            System.exit(2);
        }
        long[] places = new long[bodies.size()];
        long arenaLength = 0;
        for (int i = 0; i < places.length; i++) {
            places[i] = arenaLength;
            arenaLength += (bodies.get(i).raw() + 4095) & ~4095L;
        }
        double best = 0;
        for (int round = 1; round <= rounds; round++) {
            FileChannel arena = null;
            Path arenaPath = outDir.resolve("lz4bench-arena-" + ProcessHandle.current().pid() + "-" + round);
            if (mode.startsWith("arena")) {
                arena = FileChannel.open(arenaPath, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                        StandardOpenOption.WRITE);
                if (mode.equals("arena-sparse") || !Preallocate.blocks(arenaPath, arenaLength)) {
                    arena.write(ByteBuffer.wrap(new byte[1]), arenaLength - 1);
                }
            }
            FileChannel arenaOfRound = arena;
            long t0 = System.nanoTime();
            List<Thread> workers = new ArrayList<>();
            List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            for (int t = 0; t < threads; t++) {
                int share = t;
                Thread w = new Thread(() -> {
                    try {
                        decodeShare(bodies, share, threads, mode, outDir, arenaOfRound, places);
                    } catch (IOException | RuntimeException e) {
                        failures.add(e);
                    }
                });
                w.start();
                workers.add(w);
            }
            for (Thread w : workers) {
                w.join();
            }
            if (!failures.isEmpty()) {
                throw new IOException("decode failed: " + failures.get(0), failures.get(0));
            }
            double s = (System.nanoTime() - t0) / 1e9;
            if (arena != null) {
                arena.close();
                Files.delete(arenaPath);
            }
            double mbs = bodies.size() * (double) size / s / 1e6;
            best = Math.max(best, mbs);
            System.out.printf("round %d: %d bodies in %.4f s, %.0f files/s, %.0f MB/s raw%n", round, bodies.size(), s,
                    bodies.size() / s, mbs);
        }
        System.out.printf("decoder %s: best %.0f files/s %.0f MB/s raw (%d bodies of %d bytes, %d threads)%n",
                mode, best * 1e6 / size, best, bodies.size(), size, threads);
    }

    private static void decodeShare(List<Body> bodies, int share, int threads, String mode, Path outDir,
            FileChannel arena, long[] places) throws IOException {
        Lz4DirectDecoder decoder = new Lz4DirectDecoder();
        ByteBuffer in = ByteBuffer.allocateDirect(8 << 20).order(ByteOrder.LITTLE_ENDIAN);
        FileChannel open = null;
        Path openPath = null;
        try {
            for (int i = share; i < bodies.size(); i += threads) {
                Body b = bodies.get(i);
                if (!b.partition().equals(openPath)) {
                    if (open != null) {
                        open.close();
                    }
                    open = FileChannel.open(b.partition());
                    openPath = b.partition();
                }
                CRC32C crc = new CRC32C();
                Path out = outDir.resolve("lz4bench-" + ProcessHandle.current().pid() + "-" + i);
                switch (mode) {
                    case "write" -> {
                        try (FileChannel to = FileChannel.open(out, StandardOpenOption.CREATE_NEW,
                                StandardOpenOption.WRITE)) {
                            decoder.decode(open, b.offset(), b.stored(), b.raw(), to, crc);
                        }
                        Files.delete(out);
                    }
                    case "mmap" -> {
                        mapped(open, b, in, out, crc);
                        Files.delete(out);
                    }
                    case "arena", "arena-sparse" -> decoder.decode(open, b.offset(), b.stored(), b.raw(),
                            PositionalSink.throwing(arena, places[i], null), crc);
                    default -> decoder.decode(open, b.offset(), b.stored(), b.raw(), DiscardChannel.INSTANCE, crc);
                }
                if ((int) crc.getValue() != b.crc()) {
                    throw new IOException("CRC32C mismatch in " + b.partition() + " at " + b.offset());
                }
            }
        } finally {
            if (open != null) {
                open.close();
            }
        }
    }

    /** One-chunk body: pread it, decode into a read-write mapping of a new file of the raw size. */
    private static void mapped(FileChannel from, Body b, ByteBuffer in, Path out, CRC32C crc) throws IOException {
        in.clear().limit((int) b.stored());
        while (in.hasRemaining()) {
            if (from.read(in, b.offset() + in.position()) < 0) {
                throw new IOException("partition ends inside a body");
            }
        }
        int chunkRaw = in.getInt(PartitionDescriptor.LZ4_CHUNK_RAW_LENGTH_OFFSET);
        if (chunkRaw != b.raw()) {
            throw new IOException("mmap mode handles one-chunk bodies only");
        }
        try (FileChannel to = FileChannel.open(out, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            MappedByteBuffer map = to.map(FileChannel.MapMode.READ_WRITE, 0, b.raw());
            int got = DECOMPRESSOR.decompress(in, PartitionDescriptor.LZ4_CHUNK_HEADER_LENGTH,
                    (int) b.stored() - PartitionDescriptor.LZ4_CHUNK_HEADER_LENGTH, map, 0, (int) b.raw());
            if (got != b.raw()) {
                throw new IOException("short decode");
            }
            crc.update(map);
        }
    }
}
