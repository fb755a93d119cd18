// link:
// valgrind: yes
/* partition_format.h against the golden partition (tests/vectors/partition): a reader built on its structs
 * parses the header and table of part-00000.fsp to exactly the values partition.expect lists (names, sizes,
 * offsets, codecs, CRCs), finds the manifest's size and whole-file CRC32C, and refuses the file when its own
 * struct sizes (hence its version word) differ, or when the file's version word is another layout's. */
#include "partition_format.h"
#include "crc32c_ref.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

#define MAX_ENTRIES 64

/* One parsed table entry: its path (NUL-terminated copy) and fixed fields. */
typedef struct parsed_entry {
    char                path[256];
    fs_part_entry_fixed f;
} parsed_entry;


static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n == cap) {
            cap = cap ? cap * 2 : 8192;
            buf = realloc(buf, cap + 1);
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Parses and validates a partition as the specification says, for a reader whose layout has version word
 * `version`. Returns the entry count, or -EINVAL for anything it refuses. */
static long parse(const uint8_t *file, size_t len, uint32_t version, fs_part_header *h, parsed_entry *out,
                  size_t cap)
{
    if (len < sizeof *h)
        return -EINVAL;
    memcpy(h, file, sizeof *h);
    if (memcmp(h->magic, FS_PART_MAGIC, sizeof h->magic) != 0 || h->version != version)
        return -EINVAL;
    if (crc32c(0, file, offsetof(fs_part_header, header_crc)) != h->header_crc)
        return -EINVAL;
    uint64_t data = (sizeof *h + h->table_length + FS_PART_DATA_ALIGNMENT - 1) / FS_PART_DATA_ALIGNMENT *
                    FS_PART_DATA_ALIGNMENT;
    if (h->header_size != sizeof *h || h->table_offset != sizeof *h || h->table_length > len - sizeof *h ||
        h->data_offset != data || h->data_offset > len || h->entry_count > cap)
        return -EINVAL;
    const uint8_t *table = file + h->table_offset;
    if (crc32c(0, table, h->table_length) != h->table_crc)
        return -EINVAL;
    uint64_t at = 0;
    for (uint64_t i = 0; i < h->entry_count; i++) {
        uint32_t path_len;
        if (h->table_length - at < sizeof path_len)
            return -EINVAL;
        memcpy(&path_len, table + at, sizeof path_len);
        at += sizeof path_len;
        if (path_len >= sizeof out[i].path || h->table_length - at < path_len + sizeof out[i].f)
            return -EINVAL;
        memcpy(out[i].path, table + at, path_len);
        out[i].path[path_len] = '\0';
        at += path_len;
        memcpy(&out[i].f, table + at, sizeof out[i].f);
        at += sizeof out[i].f;
        const fs_part_entry_fixed *f = &out[i].f;
        if (f->type < FS_PART_TYPE_FILE || f->type > FS_PART_TYPE_SYMLINK || f->codec > FS_PART_CODEC_LZ4 ||
            f->body_offset > len - h->data_offset || f->stored_length > len - h->data_offset - f->body_offset)
            return -EINVAL;
        if (i > 0 && strcmp(out[i - 1].path, out[i].path) >= 0)   /* unsigned byte order, no NULs in paths */
            return -EINVAL;
    }
    return at == h->table_length ? (long)h->entry_count : -EINVAL;
}

/* Value of key= in a space-separated line, as an unsigned/signed number in `base`; fails the test if absent. */
static long long field_num(const char *line, const char *key, int base)
{
    char pat[40];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *p = strstr(line, pat);
    CHECK(p != NULL, "no %s in: %s", key, line);
    return p ? strtoll(p + strlen(pat), NULL, base) : -1;
}

static void check_against_expect(const uint8_t *file, const fs_part_header *h, const parsed_entry *e, long n,
                                 char *expect)
{
    long seen = 0;
    for (char *line = strtok(expect, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "header ", 7) == 0) {
            CHECK(field_num(line, "version", 16) == h->version, "version %x", h->version);
            CHECK(field_num(line, "header_size", 10) == (long long)sizeof *h, "header size");
            CHECK(field_num(line, "entry_fixed", 10) == (long long)sizeof e->f, "entry fixed size");
            CHECK(field_num(line, "index", 10) == h->partition_index, "index %u", h->partition_index);
            CHECK(field_num(line, "flags", 10) == h->flags, "flags %u", h->flags);
            CHECK(field_num(line, "entries", 10) == (long long)h->entry_count, "entries");
            CHECK(field_num(line, "table_offset", 10) == (long long)h->table_offset, "table offset");
            CHECK(field_num(line, "table_length", 10) == (long long)h->table_length, "table length");
            CHECK(field_num(line, "data_offset", 10) == (long long)h->data_offset, "data offset");
            continue;
        }
        if (strncmp(line, "entry ", 6) != 0)
            continue;
        CHECK(seen < n, "partition.expect lists more than the %ld entries parsed", n);
        if (seen >= n)
            return;
        const parsed_entry *x = &e[seen++];
        char path[256];
        CHECK(sscanf(line, "entry path=%255s", path) == 1, "bad line: %s", line);
        CHECK(strcmp(path, x->path[0] ? x->path : ".") == 0, "entry %ld is '%s', expected '%s'", seen - 1,
              x->path, path);
        CHECK(field_num(line, "type", 10) == x->f.type, "%s: type %u", path, x->f.type);
        CHECK(field_num(line, "codec", 10) == x->f.codec, "%s: codec %u", path, x->f.codec);
        CHECK(field_num(line, "mode", 8) == x->f.mode, "%s: mode %o", path, x->f.mode);
        CHECK(field_num(line, "uid", 10) == x->f.uid && field_num(line, "gid", 10) == x->f.gid, "%s: owner", path);
        CHECK(field_num(line, "mtime_sec", 10) == x->f.mtime_sec, "%s: mtime %lld", path, (long long)x->f.mtime_sec);
        CHECK(field_num(line, "mtime_nsec", 10) == x->f.mtime_nsec, "%s: mtime nsec", path);
        CHECK(field_num(line, "raw", 10) == (long long)x->f.raw_length, "%s: raw length", path);
        CHECK(field_num(line, "stored", 10) == (long long)x->f.stored_length, "%s: stored length", path);
        CHECK(field_num(line, "offset", 10) == (long long)x->f.body_offset, "%s: body offset", path);
        CHECK((uint32_t)field_num(line, "crc", 16) == x->f.body_crc, "%s: crc %08x", path, x->f.body_crc);
        CHECK(x->f.reserved == 0, "%s: reserved bytes", path);

        const uint8_t *body = file + h->data_offset + x->f.body_offset;
        if (x->f.codec == FS_PART_CODEC_RAW && x->f.type != FS_PART_TYPE_DIRECTORY) {
            CHECK(crc32c(0, body, x->f.stored_length) == x->f.body_crc, "%s: raw body CRC32C", path);
        } else if (x->f.codec == FS_PART_CODEC_LZ4) {
            fs_part_lz4_chunk c;   /* one chunk: the file is under FS_PART_LZ4_CHUNK_RAW */
            memcpy(&c, body, sizeof c);
            CHECK(c.raw_length == x->f.raw_length && sizeof c + c.compressed_length == x->f.stored_length,
                  "%s: LZ4 chunk header %u/%u", path, c.raw_length, c.compressed_length);
        }
    }
    CHECK(seen == n, "partition.expect lists %ld entries, the table has %ld", seen, n);
}

static void check_manifest(const char *dir, const uint8_t *file, size_t len, const fs_part_header *h)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/manifest.txt", dir);
    size_t mlen;
    char *manifest = (char *)slurp(path, &mlen);
    CHECK(manifest != NULL, "cannot read %s", path);
    if (!manifest)
        return;
    const char *line = strstr(manifest, "\npartition 0 part-00000.fsp ");
    unsigned long long bytes = 0, entries = 0;
    unsigned crc = 0;
    CHECK(line && sscanf(line, "\npartition 0 part-00000.fsp %llu %x %llu regular", &bytes, &crc, &entries) == 3,
          "no partition line in manifest.txt");
    CHECK(bytes == len, "manifest says %llu bytes, the file has %zu", bytes, len);
    CHECK(crc == crc32c(0, file, len), "whole-file CRC32C");
    CHECK(entries == h->entry_count, "manifest says %llu entries", entries);
    free(manifest);
}

/* A file whose version word is another layout's, with a valid header CRC: only the version can refuse it. */
static void check_refuses_version(const uint8_t *file, size_t len, uint32_t version)
{
    uint8_t *copy = malloc(len);
    memcpy(copy, file, len);
    memcpy(copy + offsetof(fs_part_header, version), &version, sizeof version);
    uint32_t hcrc = crc32c(0, copy, offsetof(fs_part_header, header_crc));
    memcpy(copy + offsetof(fs_part_header, header_crc), &hcrc, sizeof hcrc);
    fs_part_header h;
    parsed_entry e[MAX_ENTRIES];
    CHECK(parse(copy, len, FS_PART_VERSION, &h, e, MAX_ENTRIES) == -EINVAL, "version word %x accepted", version);
    free(copy);
}

int main(void)
{
    const char *repo = getenv("FANSTORE_REPO");
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/tests/vectors/partition", repo ? repo : "..");
    snprintf(path, sizeof path, "%s/part-00000.fsp", dir);
    size_t len, elen;
    uint8_t *file = slurp(path, &len);
    snprintf(path, sizeof path, "%s/partition.expect", dir);
    char *expect = (char *)slurp(path, &elen);
    if (!file || !expect) {
        fprintf(stderr, "FAIL cannot read the vectors in %s\n", dir);
        return 1;
    }

    fs_part_header h;
    parsed_entry entries[MAX_ENTRIES];
    long n = parse(file, len, FS_PART_VERSION, &h, entries, MAX_ENTRIES);
    CHECK(n == 9, "golden partition: parse gave %ld", n);
    if (n > 0) {
        check_against_expect(file, &h, entries, n, expect);
        check_manifest(dir, file, len, &h);
    }

    /* This reader, built with an entry or header 4 bytes longer, has another version word: it refuses. */
    uint32_t wider_entry = FS_PART_VERSION_WORD(FS_PART_LAYOUT_REVISION, sizeof(fs_part_header),
                                                sizeof(fs_part_entry_fixed) + 4);
    uint32_t wider_header = FS_PART_VERSION_WORD(FS_PART_LAYOUT_REVISION, sizeof(fs_part_header) + 4,
                                                 sizeof(fs_part_entry_fixed));
    CHECK(parse(file, len, wider_entry, &h, entries, MAX_ENTRIES) == -EINVAL, "wider entry reader accepted");
    CHECK(parse(file, len, wider_header, &h, entries, MAX_ENTRIES) == -EINVAL, "wider header reader accepted");
    /* And files written with another layout (or the old revision 1) are refused by this one. */
    check_refuses_version(file, len, wider_entry);
    check_refuses_version(file, len, wider_header);
    check_refuses_version(file, len, 1);

    free(file);
    free(expect);
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
