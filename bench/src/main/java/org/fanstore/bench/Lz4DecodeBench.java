package org.fanstore.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.fanstore.prep.format.Lz4Chunked;
import org.fanstore.prep.format.Lz4DirectDecoder;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PartitionReader;

/**
 * The LZ4 decoder alone on the bodies of a prepared dataset: every LZ4 body whose raw size is SIZE, read from the
 * partition files (warm in the page cache), decoded and CRC-checked by {@link Lz4DirectDecoder} (what the runtime
 * runs per open) into a sink that keeps nothing, on THREADS threads, each body once per round. Prints one line
 * per round, then the best: the ceiling of a first pass through fanstore on this data. With {@code heap} last,
 * the heap-array path the runtime used before ({@link Lz4Chunked#decodeTo}) instead, for comparison.
 *
 * <pre>java -cp ... org.fanstore.bench.Lz4DecodeBench DATASET_DIR SIZE_BYTES THREADS ROUNDS [heap]</pre>
 */
public final class Lz4DecodeBench {
    private Lz4DecodeBench() {
    }

    private record Body(Path partition, long offset, long stored, long raw, int crc) {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        long size = Long.parseLong(args[1]);
        int threads = Integer.parseInt(args[2]);
        int rounds = Integer.parseInt(args[3]);
        boolean heap = args.length > 4 && args[4].equals("heap");
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
        double best = 0;
        for (int round = 1; round <= rounds; round++) {
            long t0 = System.nanoTime();
            List<Thread> workers = new ArrayList<>();
            List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            for (int t = 0; t < threads; t++) {
                int share = t;
                Thread w = new Thread(() -> {
                    try {
                        decodeShare(bodies, share, threads, heap);
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
            double mbs = bodies.size() * (double) size / s / 1e6;
            best = Math.max(best, mbs);
            System.out.printf("round %d: %d bodies in %.4f s, %.0f files/s, %.0f MB/s raw%n", round, bodies.size(), s,
                    bodies.size() / s, mbs);
        }
        System.out.printf("%s alone: best %.0f files/s %.0f MB/s raw (%d bodies of %d bytes, %d threads)%n",
                heap ? "heap decoder" : "decoder", best * 1e6 / size, best, bodies.size(), size, threads);
    }

    private static void decodeShare(List<Body> bodies, int share, int threads, boolean heap) throws IOException {
        Lz4DirectDecoder decoder = new Lz4DirectDecoder();
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
                if (heap) {
                    Lz4Chunked.decodeTo(open, b.offset(), b.stored(), b.raw(), Sink.INSTANCE, crc);
                } else {
                    decoder.decode(open, b.offset(), b.stored(), b.raw(), Sink.INSTANCE, crc);
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

    /** Keeps nothing: the decoder's own write is what is measured, not a file system's. */
    private static final class Sink implements WritableByteChannel {
        static final Sink INSTANCE = new Sink();

        @Override
        public int write(ByteBuffer src) {
            int n = src.remaining();
            src.position(src.limit());
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
            // nothing held
        }
    }
}
