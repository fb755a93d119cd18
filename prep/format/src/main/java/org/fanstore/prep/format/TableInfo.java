package org.fanstore.prep.format;

/**
 * The {@code table} line of manifest.txt: the dataset's metadata table file (format: table/README.md), its size
 * and CRC32C as {@code table.TableChecksum} computes it. A node trusts a table only when both match.
 */
public record TableInfo(String fileName, long bytes, int crc32c) {
    /** The table's file name inside a dataset directory. */
    public static final String FILE_NAME = "namespace.tbl";
}
