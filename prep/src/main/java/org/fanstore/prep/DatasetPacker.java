package org.fanstore.prep;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.function.Consumer;

import org.fanstore.prep.format.DatasetPaths;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.table.DatasetTable;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.prep.store.ObjectStore;

/**
 * {@code fanstore prep}: checks the options, walks the input, plans the partitions, writes them into
 * {@code OUT.fs.tmp-<pid>/} with {@link PartitionPipeline}, builds the metadata table from the partitions'
 * tables ({@link DatasetTable}), writes the manifest and renames the directory to
 * {@code OUT.fs}. On any failure the temporary directory is removed and {@code OUT.fs} is untouched.
 */
public final class DatasetPacker {
    private final PrepOptions options;
    private final PrepProgress progress;
    private final Consumer<String> warnings;
    /** The bucket tree to pack instead of {@code options.input()}; null for a local input. */
    private final BucketTree bucket;

    private DatasetPacker(final PrepOptions options, final PrepProgress progress, final Consumer<String> warnings,
        final BucketTree bucket) {
        this.options = options;
        this.progress = progress;
        this.warnings = warnings;
        this.bucket = bucket;
    }

    /** Runs prep; user errors are {@link PrepException}s with a one-line message. */
    public static PrepResult prep(final PrepOptions options, final PrepProgress progress,
        final Consumer<String> warnings) throws PrepException, IOException {
        return new DatasetPacker(options, progress, warnings, null).run();
    }

    /**
     * Packs every object under {@code tree} ({@code s3://BUCKET/PREFIX/}) into {@code options.output()} (local);
     * {@code options.input()} and {@code fileList()} are not used (README.md, "From a bucket").
     */
    public static PrepResult prepFromBucket(final ObjectStore store, final DatasetLocation tree,
        final PrepOptions options, final PrepProgress progress, final Consumer<String> warnings)
        throws PrepException, IOException {
        if (options.fileList() != null) {
            throw new PrepException("--file-list works with a local --input only: give the objects' prefix instead");
        }
        return new DatasetPacker(options, progress, warnings, new BucketTree(store, tree, warnings)).run();
    }

    private PrepResult run() throws PrepException, IOException {
        final long start = System.nanoTime();
        if (options.partitions() < 1) {
            throw new PrepException("--partitions must be at least 1, got " + options.partitions());
        }
        if (options.threads() < 1) {
            throw new PrepException("--threads must be at least 1, got " + options.threads());
        }
        DatasetName.check(options.name());
        final Path input = bucket == null ? checkInput() : null;
        final Path output = checkOutput(input);
        final List<byte[]> broadcastDirs = broadcastDirs();

        final PartitionPlan plan = listAndPlan(input, broadcastDirs); // the listing's objects die with this call
        final long entryCount = plan.entryCount();
        final String inputName = bucket == null ? "--input " + input : "--input";
        final byte[] name = options.name() != null ? options.name() :
            bucket != null ? bucket.defaultName() : defaultName(input);

        final PrepOutput prepOutput = PrepOutput.create(output, options.force(), warnings); // cleans leftovers
        final Path temp = prepOutput.temp();
        try (prepOutput) {
            final PartitionPipeline pipeline = new PartitionPipeline(temp, options.compress(), options.threads(),
                progress, bucket == null ? SourceFiles.local(input) : bucket);
            final List<PartitionInfo> partitions = pipeline.writeAll(plan); // empties the plan's lists
            progress.close(); // the bar ends here: the table's lines follow it
            progress.phase("metadata table for " + entryCount + " entries ...");
            final long tableStart = System.nanoTime();
            final Manifest manifest;
            try {
                // consumes the tables
                manifest = DatasetTable.write(temp, pipeline.tables(), new Manifest(name, pipeline.files(),
                    pipeline.dirs(), pipeline.symlinks(), pipeline.rawBytes(), pipeline.storedBytes(),
                    options.compress(), broadcastDirs, partitions));
            } catch (final IllegalArgumentException e) {
                // the namespace is past what one table holds (README: the table's limits): a user's line, no trace
                throw new PrepException(e.getMessage() + ": " + inputName + " cannot be one fanstore dataset as it"
                    + " is; split it or normalise its owners and modes");
            }
            progress.phase(String.format("metadata table %.1f MiB (%.1f bytes/file) in %.1f s",
                manifest.table().bytes() / (double) (1 << 20),
                manifest.table().bytes() / (double) Math.max(1, manifest.files()),
                (System.nanoTime() - tableStart) / 1e9));
            manifest.write(temp);
            syncDirectory(temp);
            prepOutput.commit();
            syncDirectory(output.getParent());
            return new PrepResult(output, manifest, (System.nanoTime() - start) / 1e9);
        } catch (final PrepException | IOException | RuntimeException | Error e) {
            deleteRecursively(temp);
            throw e;
        } finally {
            progress.close();
        }
    }

    /**
     * Lists the input and plans the partitions. The listing (a map of every entry) is dropped when this returns:
     * from here on only the plan holds the entries, and the pipeline lets go of each once it is written.
     */
    private PartitionPlan listAndPlan(final Path input, final List<byte[]> broadcastDirs)
        throws PrepException, IOException {
        final NavigableMap<byte[], SourceEntry> entries;
        progress.phase("listing " + (bucket != null ? "the bucket's objects" : input) + " ...");
        final long walkStart = System.nanoTime();
        if (bucket != null) {
            entries = bucket.walk();
        } else {
            final SourceTreeWalker walker = new SourceTreeWalker(input, options.skipUnreadable(), warnings,
                options.threads());
            entries = options.fileList() == null ? walker.walkAll() : walker.walkList(checkFileList());
        }
        final String inputName = bucket == null ? "--input " + input : "--input";
        for (final byte[] dir : broadcastDirs) {
            final SourceEntry e = entries.get(dir);
            if (e == null || !e.isDir()) {
                throw new PrepException("--broadcast " + new String(dir, StandardCharsets.UTF_8) +
                    " is not a directory under " + inputName + ": give a path relative to it");
            }
        }
        progress.phase(String.format("listed %d entries in %.1f s", entries.size(),
            (System.nanoTime() - walkStart) / 1e9));
        final PartitionPlan plan = PartitionPlan.balance(entries.values(), options.partitions(), broadcastDirs);
        PartitionPlan.warnIfFewer(plan, options.partitions(), warnings);
        return plan;
    }

    private Path checkInput() throws PrepException {
        final Path input = options.input().toAbsolutePath().normalize();
        if (!Files.exists(input)) {
            throw new PrepException("--input " + input + " does not exist: give the dataset's root directory");
        }
        if (!Files.isDirectory(input)) {
            throw new PrepException("--input " + input + " is not a directory: give the dataset's root directory");
        }
        return input;
    }

    private Path checkOutput(final Path input) throws PrepException {
        final Path output = options.output().toAbsolutePath().normalize();
        final Path parent = output.getParent();
        if (parent == null || output.getFileName() == null) {
            throw new PrepException("--output " + output + " needs a name: give a path such as /data/train.fs");
        }
        if (!Files.isDirectory(parent)) {
            throw new PrepException("--output " + output + ": its parent " + parent + (Files.exists(parent) ?
                " is not a directory" : " does not exist") + ": create it or choose another --output");
        }
        if (!Files.isWritable(parent)) {
            throw new PrepException("--output " + output + ": cannot write to " + parent +
                ": choose an --output in a writable directory");
        }
        if (input != null && output.startsWith(input)) {
            throw new PrepException("--output " + output + " lies inside --input " + input +
                ": choose an --output outside the dataset");
        }
        if (Files.exists(output, java.nio.file.LinkOption.NOFOLLOW_LINKS) && !options.force()) {
            throw new PrepException("--output " + output + " already exists: pass --force to replace it or " +
                "choose another --output");
        }
        if (options.force()) {
            PrepOutput.checkReplaceable(output);
        }
        return output;
    }

    private Path checkFileList() throws PrepException {
        final Path list = options.fileList().toAbsolutePath();
        if (!Files.isRegularFile(list) || !Files.isReadable(list)) {
            throw new PrepException("--file-list " + list + " is not a readable file: give a file with one path " +
                "per line");
        }
        return list;
    }

    private List<byte[]> broadcastDirs() throws PrepException {
        final List<byte[]> dirs = new ArrayList<>();
        for (final String dir : options.broadcastDirs()) {
            final byte[] normalized = DatasetPaths.normalizeRelative(dir.getBytes(StandardCharsets.UTF_8));
            if (normalized == null || normalized.length == 0) {
                throw new PrepException("--broadcast " + dir + " must be a directory relative to --input, " +
                    "without '..' (e.g. --broadcast val/)");
            }
            dirs.add(normalized);
        }
        return dirs;
    }

    private static byte[] defaultName(final Path input) {
        return input.getFileName() == null ? "dataset".getBytes(StandardCharsets.US_ASCII) :
            NativePaths.bytesOf(input.getFileName());
    }

    static String reason(final FileSystemException e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof NoSuchFileException) {
            return "no such directory";
        }
        if (e instanceof FileAlreadyExistsException) {
            return "already exists";
        }
        return e.getReason() == null ? e.getClass().getSimpleName() : e.getReason();
    }

    private static void syncDirectory(final Path dir) {
        try (var channel = java.nio.channels.FileChannel.open(dir, java.nio.file.StandardOpenOption.READ)) {
            channel.force(true);
        } catch (final IOException ignored) {
            // Not every file system lets a directory be opened for sync; the files themselves are synced.
        }
    }

    static void deleteRecursively(final Path path) throws IOException {
        if (!Files.exists(path, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (Files.isDirectory(path, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            try (var children = Files.newDirectoryStream(path)) {
                for (final Path child : children) {
                    deleteRecursively(child);
                }
            }
        }
        Files.delete(path);
    }
}
