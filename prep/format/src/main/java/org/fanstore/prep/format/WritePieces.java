package org.fanstore.prep.format;

/**
 * The most bytes fanstore hands to one write(2) into a file it is filling: a partition copy being loaded, an LZ4
 * body being decoded, a file being unpacked.
 *
 * <p>Why a limit: on Linux (6.18, ext4) writes of several MiB into a region of a file that has no pages yet cost
 * several times the CPU per byte of the same bytes written 256 KiB at a time, all of it in the kernel's copy into
 * the new page-cache pages (copy_folio_from_iter_atomic); without pieces, that copy takes most of the CPU of an LZ4
 * first pass and of a partition load. A piece is also small enough to stay in the CPU's cache between its CRC32C
 * and its write. Four syscalls per MiB cost nothing beside that.
 */
public final class WritePieces {
    /** Bytes per write: see the class comment. */
    public static final int BYTES = 256 * 1024;

    private WritePieces() {
    }
}
