package org.fanstore.runtime.output;

/**
 * The layout of the output journal {@code outputs} (specification: README.md beside this class; C twin:
 * {@code interpose-native/src/output_journal.h}; golden file: {@code tests/vectors/outputs/}). Native-endian.
 */
public final class OutputJournalDescriptor {
    /** 8 bytes at offset 0. */
    public static final String MAGIC = "FANSOUT1";
    /** Format number, the top byte of {@link #VERSION}. */
    public static final int FORMAT = 2;
    /** Bytes before the first record: one page. */
    public static final int HEADER_LENGTH = 4096;
    /** Fixed part of a record, before its key and target bytes. */
    public static final int RECORD_HEADER_LENGTH = 48;
    /** Records start and end on this boundary. */
    public static final int RECORD_ALIGNMENT = 8;
    /** {@code FORMAT << 24 | RECORD_HEADER_LENGTH}: a reader built with another record header refuses the file. */
    public static final int VERSION = FORMAT << 24 | RECORD_HEADER_LENGTH;

    /** 8 bytes: {@link #MAGIC}. */
    public static final int MAGIC_OFFSET = 0;
    /** 4 bytes: {@link #VERSION}, stored last (release) when the file is created. */
    public static final int VERSION_OFFSET = 8;
    /** 4 bytes: the rank that writes this journal (the shim ignores FILE records held by it: its upper has them). */
    public static final int RANK_OFFSET = 12;
    /** 8 bytes: the file's length; records never pass it. */
    public static final int CAPACITY_OFFSET = 16;
    /** 8 bytes: end of the published records (file offset); stored with release after each record. */
    public static final int PUBLISHED_OFFSET = 24;
    /** 4 bytes: length of the upper directory path that follows the fields. */
    public static final int UPPER_LENGTH_OFFSET = 32;
    /** The rank's upper directory's absolute path, NUL-terminated. */
    public static final int UPPER_PATH_OFFSET = 64;

    /** 4 bytes: the record's length, header + key + target + padding (a multiple of 8). */
    public static final int RECORD_LENGTH_OFFSET = 0;
    /** 2 bytes: {@link OutputRecord.Kind#code()}. */
    public static final int RECORD_KIND_OFFSET = 4;
    /** 2 bytes: key length. */
    public static final int RECORD_KEY_LENGTH_OFFSET = 6;
    /** 2 bytes: target length (RENAME), else 0. */
    public static final int RECORD_TARGET_LENGTH_OFFSET = 8;
    /** 4 bytes: st_mode with the type bits (FILE, DIR). */
    public static final int RECORD_MODE_OFFSET = 12;
    /** 8 bytes: size (FILE). */
    public static final int RECORD_SIZE_OFFSET = 16;
    /** 8 bytes: mtime in nanoseconds since the epoch. */
    public static final int RECORD_MTIME_OFFSET = 24;
    /** 4 bytes: rank that holds the bytes (FILE). */
    public static final int RECORD_HOLDER_OFFSET = 32;
    /** 8 bytes: object id under which the holder serves the bytes (FILE: remote readers fetch it by this id). */
    public static final int RECORD_OBJECT_ID_OFFSET = 40;
    /** Key bytes, then target bytes, then zero padding. */
    public static final int RECORD_KEY_OFFSET = RECORD_HEADER_LENGTH;

    private OutputJournalDescriptor() {
    }

    /** Length of a record with these names, padded. */
    public static int recordLength(final int keyLength, final int targetLength) {
        final int raw = RECORD_HEADER_LENGTH + keyLength + targetLength;
        return (raw + RECORD_ALIGNMENT - 1) & -RECORD_ALIGNMENT;
    }
}
