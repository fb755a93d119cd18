package org.fanstore.prep.store;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * Where a dataset (or prep's input tree) lives: a local path (a directory on a shared FS) or a place in a bucket.
 * {@link #dataset} parses {@code --data}/{@code --output}: a path, or {@code s3://BUCKET/PREFIX/NAME.fs} (the dataset
 * directory's files are the objects {@code PREFIX/NAME.fs/<file>}); {@link #tree} parses prep's {@code --input}: a
 * path, or {@code s3://BUCKET/PREFIX/} (every object under it). A bad form is an IllegalArgumentException whose
 * message is one line saying what is wrong and what is expected.
 */
public final class DatasetLocation {
    private static final String SCHEME = "s3://";
    /** S3's bucket naming rules (lower case, digits, '.', '-', 3-63 characters, letter or digit at both ends). */
    private static final Pattern BUCKET = Pattern.compile("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]");

    private final String text;
    private final Path path;
    private final String bucket;
    private final String key;

    private DatasetLocation(String text, Path path, String bucket, String key) {
        this.text = text;
        this.path = path;
        this.bucket = bucket;
        this.key = key;
    }

    /** A dataset: a local path, or {@code s3://BUCKET/[PREFIX/]NAME.fs}. */
    public static DatasetLocation dataset(String value) {
        if (!isObjectStore(value)) {
            return local(value);
        }
        String[] bk = split(value, "s3://BUCKET/PREFIX/NAME.fs");
        String key = bk[1];
        if (key.endsWith("/")) {
            key = key.substring(0, key.length() - 1);
        }
        checkKey(value, key, "s3://BUCKET/PREFIX/NAME.fs");
        if (!key.substring(key.lastIndexOf('/') + 1).endsWith(".fs")) {
            throw new IllegalArgumentException(value + ": a dataset in a bucket is named NAME.fs, as"
                    + " s3://BUCKET/PREFIX/NAME.fs");
        }
        return new DatasetLocation(value, null, bk[0], key);
    }

    /** Prep's input: a local directory, or every object under {@code s3://BUCKET/PREFIX/}. */
    public static DatasetLocation tree(String value) {
        if (!isObjectStore(value)) {
            return local(value);
        }
        String[] bk = split(value, "s3://BUCKET/PREFIX/");
        String key = bk[1];
        if (!key.isEmpty()) {
            checkKey(value, key.endsWith("/") ? key.substring(0, key.length() - 1) : key, "s3://BUCKET/PREFIX/");
            if (!key.endsWith("/")) {
                key = key + "/";
            }
        }
        return new DatasetLocation(value, null, bk[0], key);
    }

    /** True when the value names a place in a bucket rather than a path. */
    public static boolean isObjectStore(String value) {
        return value.regionMatches(true, 0, SCHEME, 0, SCHEME.length());
    }

    private static DatasetLocation local(String value) {
        if (value.isEmpty()) {
            throw new IllegalArgumentException("an empty path: give a directory or s3://BUCKET/PREFIX/NAME.fs");
        }
        if (value.contains("://")) {
            throw new IllegalArgumentException(value + ": only s3:// locations and local paths are supported");
        }
        try {
            return new DatasetLocation(value, Path.of(value), null, null);
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException(value + ": not a valid path (" + e.getReason() + ")", e);
        }
    }

    private static String[] split(String value, String form) {
        if (!value.startsWith(SCHEME)) {
            throw new IllegalArgumentException(value + ": write the scheme in lower case, as " + form);
        }
        String rest = value.substring(SCHEME.length());
        int slash = rest.indexOf('/');
        String bucket = slash < 0 ? rest : rest.substring(0, slash);
        String key = slash < 0 ? "" : rest.substring(slash + 1);
        if (bucket.isEmpty()) {
            throw new IllegalArgumentException(value + ": no bucket; expected " + form);
        }
        if (!BUCKET.matcher(bucket).matches() || bucket.contains("..")) {
            throw new IllegalArgumentException(value + ": '" + bucket + "' is not a bucket name (3-63 characters:"
                    + " lower-case letters, digits, '.', '-'); expected " + form);
        }
        return new String[] {bucket, key};
    }

    private static void checkKey(String value, String key, String form) {
        if (key.isEmpty()) {
            throw new IllegalArgumentException(value + ": no object name after the bucket; expected " + form);
        }
        for (String segment : key.split("/", -1)) {
            if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                throw new IllegalArgumentException(value + ": empty, '.' or '..' part in the key; expected " + form);
            }
        }
        if (key.indexOf('\0') >= 0 || key.length() > 900) {
            throw new IllegalArgumentException(value + ": the key is not usable (a NUL, or over 900 bytes)");
        }
    }

    public boolean isObjectStore() {
        return bucket != null;
    }

    /** The local path; null for a bucket location. */
    public Path path() {
        return path;
    }

    /** The bucket; null for a local path. */
    public String bucket() {
        return bucket;
    }

    /**
     * The key: for a dataset, {@code PREFIX/NAME.fs} (no trailing '/'); for a tree, {@code PREFIX/} or "" (the whole
     * bucket). Null for a local path.
     */
    public String key() {
        return key;
    }

    /** The dataset's name, {@code NAME.fs} (the last part of the path or key). */
    public String name() {
        if (path != null) {
            Path f = path.getFileName();
            return f == null ? path.toString() : f.toString();
        }
        String k = key.endsWith("/") ? key.substring(0, key.length() - 1) : key;
        return k.substring(k.lastIndexOf('/') + 1);
    }

    /** The key of one file of the dataset directory ({@code manifest.txt}, a partition): {@code key/fileName}. */
    public String objectKey(String fileName) {
        if (bucket == null) {
            throw new IllegalStateException(text + " is a local path");
        }
        return key.isEmpty() || key.endsWith("/") ? key + fileName : key + "/" + fileName;
    }

    /** {@code s3://bucket/key} of one file of the dataset: what messages name. */
    public String url(String fileName) {
        return SCHEME + bucket + "/" + objectKey(fileName);
    }

    /** The value as the user wrote it. */
    @Override
    public String toString() {
        return text;
    }
}
