package org.fanstore.prep.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.AbortMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;

/** The parallel transfers of {@link ObjectStore}: large reads in parts, and file uploads (multipart past a part). */
final class StoreTransfers {
    private final ObjectStore store;
    private final S3Client s3;
    private final ExecutorService pool;
    private final StoreCounters counters;
    private final StoreErrors errors;

    StoreTransfers(ObjectStore store, S3Client s3, ExecutorService pool, StoreCounters counters, StoreErrors errors) {
        this.store = store;
        this.s3 = s3;
        this.pool = pool;
        this.counters = counters;
        this.errors = errors;
    }

    /** As {@link ObjectStore#readParallel}: every part ends by {@code deadline}, and so does the wait for it. */
    void readParallel(String bucket, String key, long position, long length, WritableByteChannel sink,
            long deadline) throws IOException {
        int part = StoreTiming.READ_PART_BYTES;
        if (length <= part) {
            store.read(bucket, key, position, length, sink, deadline);
            return;
        }
        long began = System.nanoTime();
        int parts = (int) ((length + part - 1) / part);
        List<Future<ByteBuffer>> inFlight = new ArrayList<>();
        int next = 0;
        try {
            for (int i = 0; i < parts; i++) {
                while (next < parts && next - i < StoreTiming.PARALLEL_PARTS) {
                    long off = position + (long) next * part;
                    int len = (int) Math.min(part, position + length - off);
                    inFlight.add(pool.submit(() -> {
                        ByteBuffer b = ByteBuffer.allocate(len);
                        store.read(bucket, key, off, len, Sinks.into(b), deadline);
                        return b.flip();
                    }));
                    next++;
                }
                ByteBuffer b = await(inFlight.get(i), deadline, () -> store.late(bucket, key, began));
                inFlight.set(i, null);
                while (b.hasRemaining()) {
                    sink.write(b);
                }
            }
        } finally {
            cancel(inFlight);
        }
    }


    /** As {@link ObjectStore#readToFile}. */
    void readToFile(String bucket, String key, long position, long length, FileChannel file,
            long filePosition) throws IOException {
        int part = StoreTiming.READ_PART_BYTES;
        List<Future<Void>> parts = new ArrayList<>();
        try {
            for (long done = 0; done < length; done += part) {
                long off = done;
                long len = Math.min(part, length - done);
                parts.add(pool.submit(() -> {
                    store.read(bucket, key, position + off, len, Sinks.at(file, filePosition + off));
                    return null;
                }));
            }
            for (Future<Void> f : parts) {
                await(f);
            }
        } finally {
            cancel(parts);
        }
    }

    /** As {@link ObjectStore#upload(String, String, Path, java.util.Map, java.util.function.LongConsumer)}. */
    void upload(String bucket, String key, Path file, java.util.Map<String, String> metadata,
            java.util.function.LongConsumer progress) throws IOException {
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = in.size();
            int part = StoreTiming.UPLOAD_PART_BYTES;
            if (size <= part) {
                ByteBuffer b = ByteBuffer.allocate((int) size);
                readFully(in, b, 0);
                try {
                    s3.putObject(PutObjectRequest.builder().bucket(bucket).key(key).metadata(metadata).build(),
                            RequestBody.fromBytes(b.array()));
                    counters.bytesOut(size);
                } catch (SdkException e) {
                    throw errors.map(e, "PUT", bucket, key);
                }
                progress.accept(size);
                return;
            }
            String id;
            try {
                id = s3.createMultipartUpload(CreateMultipartUploadRequest.builder().bucket(bucket).key(key)
                        .metadata(metadata).build())
                        .uploadId();
            } catch (SdkException e) {
                throw errors.map(e, "PUT", bucket, key);
            }
            List<Future<CompletedPart>> parts = new ArrayList<>();
            boolean done = false;
            try {
                for (int n = 1; (long) (n - 1) * part < size; n++) {
                    int number = n;
                    long off = (long) (n - 1) * part;
                    int len = (int) Math.min(part, size - off);
                    parts.add(pool.submit(() -> {
                        ByteBuffer b = ByteBuffer.allocate(len);
                        readFully(in, b, off);
                        try {
                            String etag = s3.uploadPart(UploadPartRequest.builder().bucket(bucket).key(key)
                                    .uploadId(id).partNumber(number).contentLength((long) len).build(),
                                    RequestBody.fromBytes(b.array())).eTag();
                            counters.bytesOut(len);
                            progress.accept(len);
                            return CompletedPart.builder().partNumber(number).eTag(etag).build();
                        } catch (SdkException e) {
                            throw errors.map(e, "PUT", bucket, key);
                        }
                    }));
                }
                List<CompletedPart> completed = new ArrayList<>();
                for (Future<CompletedPart> f : parts) {
                    completed.add(await(f));
                }
                try {
                    s3.completeMultipartUpload(c -> c.bucket(bucket).key(key).uploadId(id)
                            .multipartUpload(u -> u.parts(completed)));
                } catch (SdkException e) {
                    throw errors.map(e, "PUT", bucket, key);
                }
                done = true;
            } finally {
                if (!done) {
                    cancel(parts);
                    abort(bucket, key, id);
                }
            }
        }
    }

    private void abort(String bucket, String key, String id) {
        try {
            s3.abortMultipartUpload(AbortMultipartUploadRequest.builder().bucket(bucket).key(key).uploadId(id)
                    .build());
        } catch (SdkException e) {
            // best effort: the upload already failed with its own line; a bucket lifecycle rule reaps leftovers
        }
    }

    /** A part's result by deadline (a part queued behind other callers' parts must not outlast it). */
    private static <T> T await(Future<T> f, long deadline, java.util.function.Supplier<StoreException> late)
            throws IOException {
        if (deadline == StoreDeadlines.NONE) {
            return await(f);
        }
        try {
            return await(f, StoreDeadlines.left(deadline).toNanos());
        } catch (java.util.concurrent.TimeoutException e) {
            throw late.get();
        }
    }

    private static <T> T await(Future<T> f) throws IOException {
        try {
            return await(f, -1);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("no bound, no timeout", e);
        }
    }

    /** f's result; {@code nanos} < 0: no bound of its own. */
    private static <T> T await(Future<T> f, long nanos) throws IOException, java.util.concurrent.TimeoutException {
        try {
            return nanos < 0 ? f.get() : f.get(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof IOException io) {
                throw io;
            }
            if (c instanceof RuntimeException r) {
                throw r;
            }
            throw new IOException(String.valueOf(c), c);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while waiting for the object store");
        } catch (CancellationException e) {
            throw new java.io.InterruptedIOException("the transfer was cancelled");
        }
    }

    private static <T> void cancel(List<Future<T>> futures) {
        for (Future<T> f : futures) {
            if (f != null) {
                f.cancel(true);
            }
        }
    }

    private static void readFully(FileChannel in, ByteBuffer b, long position) throws IOException {
        long at = position;
        while (b.hasRemaining()) {
            int n = in.read(b, at);
            if (n < 0) {
                throw new IOException("file ended at byte " + at + " while uploading it");
            }
            at += n;
        }
        b.flip();
    }
}
