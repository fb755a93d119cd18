package org.fanstore.launcher;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.fanstore.prep.format.Dataset;
import org.fanstore.prep.format.DatasetPaths;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PathBytes;

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
