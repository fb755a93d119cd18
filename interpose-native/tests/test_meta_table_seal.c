// link: meta_table.c meta_table_lookup.c
// valgrind: yes
/* The seal (meta_table.c, fs_table_open_sealed): the first open of a table walks every entry and writes the seal;
 * a later open of that very file trusts it and still answers every lookup of basic.expect; a table renamed over it
 * (another inode), a seal of another generation, a short or foreign seal and an unwritable seal directory all mean
 * a full pass, so a malformed table behind a stale seal is still refused. */
#include "meta_expect.h"

#include <fcntl.h>

static char dir[] = "/tmp/fanstore-seal-XXXXXX";
static char table[256], seal[256];

static int installed;

/* Copies vector name to path (a new inode each time: written as path.new, renamed over path; the replaced file is
 * kept under another name, so its inode number is not reused while the test runs, as in a job, where meta.tbl is
 * written once in a directory of its own). */
static void install(const char *name, const char *path)
{
    char tmp[300], keep[300];
    snprintf(tmp, sizeof tmp, "%s.new", path);
    snprintf(keep, sizeof keep, "%s.keep%d", path, installed++);
    if (link(path, keep) != 0)
        CHECK(errno == ENOENT, "keep %s", keep);
    FILE *in = fopen(vector_path(name), "rb");
    FILE *out = fopen(tmp, "wb");
    CHECK(in != NULL && out != NULL, "copy %s", name);
    if (in == NULL || out == NULL)
        return;
    char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, out);
    fclose(in);
    fclose(out);
    CHECK(rename(tmp, path) == 0, "rename %s", tmp);
}

/* Opens the table with the seal; returns validated_here, or -1 when refused. */
static int open_sealed(int *rc_out)
{
    fs_table t;
    int rc = fs_table_open_sealed(table, seal, &t);
    *rc_out = rc;
    if (rc != 0)
        return -1;
    int here = (int)t.validated_here;
    /* Whatever vouched for it, the mapped table answers every line of basic.expect. */
    check_expect(&t, "basic.expect");
    fs_table_close(&t);
    return here;
}

static void test_first_open_seals_and_the_next_trusts_it(void)
{
    install("basic.tbl", table);
    unlink(seal);
    int rc;
    CHECK(open_sealed(&rc) == 1, "first open walks every entry (rc %d)", rc);
    struct stat st;
    CHECK(stat(seal, &st) == 0 && st.st_size == (off_t)sizeof(fs_meta_seal) && (st.st_mode & 0077) == 0,
          "seal written, 0600, %zu bytes", sizeof(fs_meta_seal));
    CHECK(open_sealed(&rc) == 0, "second open trusts the seal (rc %d)", rc);
    CHECK(open_sealed(&rc) == 0, "and the third");
    /* fs_table_open never trusts a seal (tools and tests validate in full). */
    fs_table t;
    CHECK(fs_table_open(table, &t) == 0 && t.validated_here == 1, "fs_table_open validates in full");
    fs_table_close(&t);
}

static void test_a_stale_seal_is_not_trusted(void)
{
    int rc;
    install("basic.tbl", table);
    unlink(seal);
    CHECK(open_sealed(&rc) == 1, "sealed");
    /* Another table renamed over the sealed one: a new inode, so a full pass, which refuses it. */
    install("name-outside-names.tbl", table);
    CHECK(open_sealed(&rc) == -1 && rc == -EINVAL, "malformed table behind a stale seal refused (rc %d)", rc);
    install("child-range-not-tiled.tbl", table);
    CHECK(open_sealed(&rc) == -1 && rc == -EINVAL, "and another (rc %d)", rc);

    /* A seal of another generation (another job's table) is not this table's. */
    install("basic.tbl", table);
    unlink(seal);
    CHECK(open_sealed(&rc) == 1, "sealed again");
    fs_meta_seal s;
    int fd = open(seal, O_RDWR);
    CHECK(fd >= 0 && pread(fd, &s, sizeof s, 0) == (ssize_t)sizeof s, "read seal");
    s.generation ^= 1;
    CHECK(pwrite(fd, &s, sizeof s, 0) == (ssize_t)sizeof s, "write seal");
    CHECK(open_sealed(&rc) == 1, "another generation: full pass");
    /* That pass wrote a good seal again (a new file, renamed over it); now one byte longer, then a short one. */
    CHECK(open_sealed(&rc) == 0, "resealed");
    close(fd);
    fd = open(seal, O_RDWR);
    CHECK(fd >= 0 && pwrite(fd, "x", 1, sizeof s) == 1, "lengthen");
    CHECK(open_sealed(&rc) == 1, "a longer seal is no seal");
    close(fd);
    fd = open(seal, O_RDWR);
    CHECK(fd >= 0 && ftruncate(fd, 8) == 0, "shorten");
    CHECK(open_sealed(&rc) == 1, "a short seal is no seal");
    close(fd);
}

static void test_an_unwritable_seal_only_costs_a_full_pass(void)
{
    int rc;
    install("basic.tbl", table);
    unlink(seal);
    char elsewhere[300];
    snprintf(elsewhere, sizeof elsewhere, "%s/no-such-dir/seal", dir);
    fs_table t;
    errno = EXDEV;
    CHECK(fs_table_open_sealed(table, elsewhere, &t) == 0 && t.validated_here == 1, "opens, validated in full");
    CHECK(errno == EXDEV, "caller's errno preserved");
    fs_table_close(&t);
    CHECK(open_sealed(&rc) == 1, "no seal was written for the real path either");
}

int main(void)
{
    const char *repo = getenv("FANSTORE_REPO");
    snprintf(vectors, sizeof vectors, "%s/tests/vectors/metadata", repo ? repo : "..");
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(table, sizeof table, "%s/meta.tbl", dir);
    snprintf(seal, sizeof seal, "%s/meta.tbl.valid", dir);
    test_first_open_seals_and_the_next_trusts_it();
    test_a_stale_seal_is_not_trusted();
    test_an_unwritable_seal_only_costs_a_full_pass();
    unlink(table);
    unlink(seal);
    for (int i = 0; i < installed; i++) {
        char keep[300];
        snprintf(keep, sizeof keep, "%s.keep%d", table, i);
        unlink(keep);
    }
    rmdir(dir);
    if (failures)
        fprintf(stderr, "test_meta_table_seal: %d failures\n", failures);
    return failures ? 1 : 0;
}
