// link: output_journal.c
// valgrind: yes
/* The shim's journal reader on the golden file tests/vectors/outputs/basic.journal (written by the runtime's
 * OutputJournal, reproduced by OutputJournalTest): header, the four records and their fields; a published end
 * cut inside a record, a bad version and a record that claims to run past the end are refused with -EPROTO. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output_journal.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

static unsigned char *load(size_t *size)
{
    const char *repo = getenv("FANSTORE_REPO");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/vectors/outputs/basic.journal", repo ? repo : "..");
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    unsigned char *buf = malloc(8192);
    *size = fread(buf, 1, 8192, f);
    fclose(f);
    return buf;
}

int main(void)
{
    size_t size;
    unsigned char *j = load(&size);
    const fs_oj_header *h = (const fs_oj_header *)j;
    CHECK(size == 8192, "size %zu", size);
    CHECK(fs_oj_check(j, size) == 0, "header refused");
    CHECK(h->rank == 1, "rank %d", h->rank);
    CHECK(h->staging_len == strlen("/local/fanstore-0-job/rank-1/upper") &&
          memcmp(j + FS_OJ_STAGING_OFFSET, "/local/fanstore-0-job/rank-1/upper", h->staging_len) == 0,
          "upper path");
    uint64_t end = h->published, pos = FS_OJ_HEADER_SIZE;
    const unsigned kinds[] = { FS_OJ_DIR, FS_OJ_FILE, FS_OJ_RENAME, FS_OJ_UNLINK };
    const char *keys[] = { "out", "out/a.pt", "out/a.pt", "out/b.pt" };
    int n = 0;
    while (pos < end) {
        const fs_oj_record *r;
        int64_t next = fs_oj_next(j, pos, end, &r);
        CHECK(next > 0, "record at %llu refused", (unsigned long long)pos);
        if (next <= 0 || n >= 4)
            break;
        CHECK(r->kind == kinds[n], "record %d kind %u", n, r->kind);
        CHECK(r->key_len == strlen(keys[n]) && memcmp(fs_oj_key(r), keys[n], r->key_len) == 0, "record %d key", n);
        CHECK(r->mtime_ns == 1700000000123456789LL, "record %d mtime", n);
        if (r->kind == FS_OJ_FILE)
            CHECK(r->size == 12345 && r->mode == 0100644 && r->holder == 1 && r->object_id == 7, "file fields");
        if (r->kind == FS_OJ_DIR)
            CHECK(r->mode == 040755, "dir mode %o", r->mode);
        if (r->kind == FS_OJ_RENAME)
            CHECK(r->target_len == 8 && memcmp(fs_oj_target(r), "out/b.pt", 8) == 0, "rename target");
        pos = (uint64_t)next;
        n++;
    }
    CHECK(n == 4 && pos == end, "%d records, stopped at %llu of %llu", n, (unsigned long long)pos,
          (unsigned long long)end);

    const fs_oj_record *r;
    CHECK(fs_oj_next(j, FS_OJ_HEADER_SIZE, FS_OJ_HEADER_SIZE + 40, &r) == -EPROTO, "a cut record is refused");
    CHECK(fs_oj_next(j, FS_OJ_HEADER_SIZE + 4, end, &r) == -EPROTO, "a misaligned position is refused");
    unsigned char *bad = malloc(size);
    memcpy(bad, j, size);
    ((fs_oj_record *)(bad + FS_OJ_HEADER_SIZE))->length = 1u << 20;
    CHECK(fs_oj_next(bad, FS_OJ_HEADER_SIZE, end, &r) == -EPROTO, "a record running past the end is refused");
    memcpy(bad, j, size);
    *(uint32_t *)(bad + 8) = FS_OJ_VERSION + (1u << 24);
    CHECK(fs_oj_check(bad, size) == -EPROTO, "another format is refused");
    CHECK(fs_oj_check(j, size - 1) == -EPROTO, "another length than the header's capacity is refused");
    free(bad);
    free(j);
    if (failures == 0)
        printf("basic.journal: 4 records read as written\n");
    return failures == 0 ? 0 : 1;
}
