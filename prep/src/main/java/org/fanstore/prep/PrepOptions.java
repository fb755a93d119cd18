package org.fanstore.prep;

import java.nio.file.Path;
import java.util.List;

import org.fanstore.prep.format.Compression;

/**
 * What {@code fanstore prep} was asked to do. {@code name} null means the input directory's base name;
 * {@code fileList} null means the whole tree; {@code broadcastDirs} are relative paths as the user typed them.
 */
public record PrepOptions(Path input, Path output, byte[] name, int partitions, Compression compress,
    List<String> broadcastDirs, int threads, Path fileList, boolean skipUnreadable, boolean force) {
}
