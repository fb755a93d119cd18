package org.fanstore.prep.format;

/**
 * The most bytes fanstore hands to one write(2) into a file it is filling: a partition copy being loaded, an LZ4
 * body being decoded, a file being unpacked.
 *
 * <p>Why a limit: on this project's machines (Linux 6.18, ext4, a VM) writes of several MiB into a region of a file
 * that has no pages yet cost several times the CPU per byte of the same bytes written 256 KiB at a time, all of it in
 * the kernel's copy into the new page-cache pages (copy_folio_from_iter_atomic). Measured: a 2 MiB LZ4 first pass
 * spent 67% of its CPU there with whole-body writes and 8% with pieces, and ran 1.9x faster; loading 512 MiB of
 * partitions took 1.0-1.6 s with 8 MiB writes and 0.4-0.5 s with pieces (bench/RESULTS.md, "Decoded bytes written
 * in pieces", "Partition copies and unpacked files written in pieces"). A piece is also small enough to stay in the
 * CPU's cache between its CRC32C and its write. Four syscalls per MiB cost nothing beside that.
 */
public final class WritePieces {
    /** Bytes per write: see the class comment. */
    public static final int BYTES = 256 * 1024;

    private WritePieces() {
    }
}
