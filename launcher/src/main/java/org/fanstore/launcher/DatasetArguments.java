package org.fanstore.launcher;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.fanstore.prep.format.Dataset;
import org.fanstore.prep.format.DatasetPaths;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PathBytes;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.prep.store.ObjectStore;

/**
 * Turns the inspection commands' arguments into a dataset and path bytes. A PATH may start with '/', may be
 * "." for the root, and may spell bytes that are not UTF-8 as %XX, the manifest's escape syntax; a name
 * given literally is taken with the bytes the shell passed, valid UTF-8 or not ({@link RawArguments}).
 */
final class DatasetArguments {
    private DatasetArguments() {
    }

    /** {@code datasetDir} itself, or a usage error when it is not a directory. */
    static Path directory(final Path datasetDir) {
        if (!Files.isDirectory(datasetDir)) {
            throw new UserError(datasetDir + " is not a directory: give the OUT.fs directory fanstore prep wrote");
        }
        return datasetDir;
    }

    /**
     * A dataset opened for ls, stat, cat: a local directory, or {@code s3://BUCKET/PREFIX/NAME.fs} through a
     * {@link StoreDataset} mirror (symlink targets fetched at open, one ranged GET each; other bodies by
     * {@link #fetch} just before they are read).
     */
    static final class Inspected implements AutoCloseable {
        private final Dataset dataset;
        private final ObjectStore store;
        private final StoreDataset remote;
        private final String shown;

        private Inspected(final Dataset dataset, final ObjectStore store, final StoreDataset remote,
            final String shown) {
            this.dataset = dataset;
            this.store = store;
            this.remote = remote;
            this.shown = shown;
        }

        Dataset dataset() {
            return dataset;
        }

        /** The dataset as the user named it. */
        String shown() {
            return shown;
        }

        /** Makes the located entry's body readable (a ranged GET for a dataset in a bucket). */
        void fetch(final Dataset.Located located) throws IOException {
            if (remote != null) {
                remote.fetchBody(located.partition().file().getFileName().toString(), located.entry());
            }
        }

        @Override
        public void close() throws IOException {
            try {
                dataset.close();
            } finally {
                if (remote != null) {
                    remote.close();
                    store.close();
                }
            }
        }
    }

    /** The store named by the AWS conventions, for a value that is an s3:// location. */
    static ObjectStore store() throws IOException {
        return ObjectStore.fromEnvironment();
    }

    /** Parses a dataset argument (local path or s3://BUCKET/PREFIX/NAME.fs); a bad form is a usage error. */
    static DatasetLocation location(final String text) {
        try {
            return DatasetLocation.dataset(text);
        } catch (final IllegalArgumentException e) {
            throw new UserError(e.getMessage());
        }
    }

    /** Opens a local dataset directory or a dataset in a bucket for inspection. */
    static Inspected inspect(final String text) throws IOException {
        final DatasetLocation location = location(text);
        if (!location.isObjectStore()) {
            return new Inspected(open(location.path()), null, null, text);
        }
        final ObjectStore store = store();
        StoreDataset remote = null;
        Dataset dataset = null;
        try {
            remote = StoreDataset.open(store, location);
            dataset = Dataset.open(remote.dir());
            final Inspected in = new Inspected(dataset, store, remote, text);
            for (final Dataset.Located l : dataset.all()) {
                if (l.entry().isSymlink()) {
                    in.fetch(l);
                }
            }
            return in;
        } catch (final IOException | RuntimeException e) {
            if (dataset != null) {
                dataset.close();
            }
            if (remote != null) {
                remote.close();
            }
            store.close();
            throw e;
        }
    }

    static Dataset open(final Path datasetDir) throws IOException {
        directory(datasetDir);
        if (!Files.isRegularFile(datasetDir.resolve(Manifest.FILE_NAME))) {
            throw new UserError(datasetDir + " has no " + Manifest.FILE_NAME + ": give the OUT.fs directory " +
                "fanstore prep wrote");
        }
        return Dataset.open(datasetDir);
    }

    /** The dataset path bytes {@code text} names, trying %XX unescaping if the literal path is absent. */
    static byte[] path(final Dataset dataset, final String text) {
        final byte[] literal = normalize(RawArguments.bytesOf(text), text);
        if (dataset.lookup(literal).isPresent() || text.indexOf('%') < 0) {
            return literal;
        }
        final byte[] unescaped = normalize(PathBytes.percentDecode(text), text);
        return dataset.lookup(unescaped).isPresent() ? unescaped : literal;
    }

    private static byte[] normalize(final byte[] bytes, final String text) {
        int start = 0;
        while (start < bytes.length && bytes[start] == '/') {
            start++;
        }
        final byte[] relative = new byte[bytes.length - start];
        System.arraycopy(bytes, start, relative, 0, relative.length);
        final byte[] normalized = DatasetPaths.normalizeRelative(relative);
        if (normalized == null) {
            throw new UserError("path " + text + " uses '..': give a path inside the dataset");
        }
        return normalized;
    }
}
