// link: meta_table.c meta_table_lookup.c
/* meta_table reader past 4 GiB: far.sparse (tests/vectors/metadata, built by the Java FarVector) is basic.tbl with
 * its names section moved past 4 GiB and every non-empty directory's names base above 2^31 (names lie past 6 GiB).
 * Expanded here into a sparse file of 6 GiB (holes cost no disk), it must open and answer every lookup far.expect
 * lists: an offset cut to 32 bits (or to a signed int) would land on zeros and fail. Not under valgrind (a 6 GiB
 * mapping). */
#include "meta_expect.h"

#include <fcntl.h>

/* Writes the image's extents into a new sparse file at path; returns 0 or -1. */
static int expand(const char *image, const char *path)
{
    FILE *f = fopen(image, "r");
    CHECK(f != NULL, "%s", image);
    if (f == NULL)
        return -1;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0, "create %s", path);
    if (fd < 0) {
        fclose(f);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (rc == 0 && getline(&line, &cap, f) > 0) {
        unsigned long long at;
        int skip = 0;
        if (sscanf(line, "length %llu", &at) == 1) {
            rc = ftruncate(fd, (off_t)at);
        } else if (sscanf(line, "extent %llu %n", &at, &skip) == 1 && skip > 0) {
            char *hexed = line + skip;
            size_t n = strcspn(hexed, "\n") / 2;
            char *bytes = malloc(n + 1);
            unhex(hexed, bytes);
            rc = pwrite(fd, bytes, n, (off_t)at) == (ssize_t)n ? 0 : -1;
            free(bytes);
        }
    }
    free(line);
    fclose(f);
    close(fd);
    CHECK(rc == 0, "expanding %s", image);
    return rc;
}

int main(void)
{
    const char *repo = getenv("FANSTORE_REPO");
    snprintf(vectors, sizeof vectors, "%s/tests/vectors/metadata", repo ? repo : "..");
    char path[] = "/tmp/fanstore-meta-far-XXXXXX";
    int tmp = mkstemp(path);
    CHECK(tmp >= 0, "mkstemp");
    if (tmp < 0)
        return 1;
    close(tmp);
    unlink(path);
    static char image[8192];
    snprintf(image, sizeof image, "%s", vector_path("far.sparse"));
    if (expand(image, path) == 0) {
        struct stat st;
        CHECK(stat(path, &st) == 0 && st.st_size > (6ll << 30), "the expanded table crosses 6 GiB");
        CHECK(st.st_blocks * 512ll < (64ll << 20), "the expanded table is sparse (%lld bytes on disk)",
              (long long)st.st_blocks * 512);
        check_vectors(path, "far.expect");
        fs_table t;
        if (fs_table_open(path, &t) == 0) {
            /* The names lie past 4 GiB, names bases above 2^31: what the vector exists to prove. */
            uint32_t bases = 0;
            for (uint32_t i = 0; i < t.entry_count; i++) {
                const fs_entry *e = fs_table_entry(&t, i);
                if (S_ISDIR(fs_entry_mode(&t, e)) && fs_dir_count(e) > 0) {
                    CHECK(fs_dir_names_base(e) > (2ull << 30), "names base of entry %u above 2^31", i);
                    bases++;
                }
            }
            CHECK(bases > 3, "%u directories with children", bases);
            CHECK((const uint8_t *)t.names - t.base > (4ll << 30), "the names start past 4 GiB");
            const fs_entry *last = fs_table_entry(&t, (uint32_t)(t.entry_count - 1));
            printf("far table: %llu bytes, last name at offset %lld\n", (unsigned long long)t.length,
                   (long long)((const uint8_t *)fs_entry_stored(&t, last) - t.base));
            fs_table_close(&t);
        }
    }
    unlink(path);
    if (failures)
        fprintf(stderr, "test_meta_table_far: %d failures\n", failures);
    return failures ? 1 : 0;
}
