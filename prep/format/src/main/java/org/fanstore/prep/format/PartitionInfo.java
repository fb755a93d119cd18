package org.fanstore.prep.format;

/** One {@code partition} line of manifest.txt: a partition file, its size, whole-file CRC32C and entry count. */
public record PartitionInfo(int index, String fileName, long bytes, int crc32c, long entries, boolean broadcast) {
}
