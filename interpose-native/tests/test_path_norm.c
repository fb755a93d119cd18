// link: path_norm.c
// valgrind: yes
/* path_norm: normalisation, the `..` rule at the mount and at "/", classification of absolute and relative
 * paths, the fast reject, and buffer limits. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "path_norm.h"

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
    printf(__VA_ARGS__); printf("\n"); } } while (0)

static void norm(const char *base, const char *path, const char *want)
{
    char out[PATH_MAX];
    ssize_t n = fs_path_normalize(base, strlen(base), path, out, sizeof out);
    CHECK(n >= 0 && strcmp(out, want) == 0 && (size_t)n == strlen(want),
          "normalize(%s, %s) = %s (%zd), want %s", base, path, n >= 0 ? out : "<err>", n, want);
}

static fs_ns ns_at(const char *cwd)
{
    fs_ns ns = { .mount = "/fanstore", .mount_len = 9, .cwd = cwd, .cwd_len = cwd ? strlen(cwd) : 0 };
    ns.cwd_near = cwd ? fs_path_cwd_near(ns.mount, ns.mount_len, cwd, ns.cwd_len) : 0;
    return ns;
}

/* want_key NULL: outside. */
static void classify(const char *cwd, const char *path, const char *want_key)
{
    fs_ns ns = ns_at(cwd);
    char key[PATH_MAX];
    size_t len = 12345;
    int c = fs_path_classify(&ns, path, key, sizeof key, &len);
    if (want_key == NULL)
        CHECK(c == FS_PATH_OUTSIDE, "classify(cwd=%s, %s) = %d, want outside", cwd ? cwd : "-", path, c);
    else
        CHECK(c == FS_PATH_INSIDE && strcmp(key, want_key) == 0 && len == strlen(want_key),
              "classify(cwd=%s, %s) = %d key '%s', want key '%s'", cwd ? cwd : "-", path, c,
              c == FS_PATH_INSIDE ? key : "", want_key);
}

/* Outside, but walked through the mount: the kernel gets want_path instead. */
static void rewritten(const char *cwd, const char *path, const char *want_path)
{
    fs_ns ns = ns_at(cwd);
    char key[PATH_MAX];
    size_t len = 12345;
    int c = fs_path_classify(&ns, path, key, sizeof key, &len);
    CHECK(c == FS_PATH_REWRITTEN && strcmp(key, want_path) == 0 && len == strlen(want_path),
          "classify(cwd=%s, %s) = %d '%s', want rewritten to '%s'", cwd ? cwd : "-", path, c,
          c == FS_PATH_REWRITTEN ? key : "", want_path);
}

int main(void)
{
    /* Normalisation. */
    norm("/", "/", "/");
    norm("/", "//", "/");
    norm("/", "/a//b/./c/", "/a/b/c");
    norm("/", "/a/b/../c", "/a/c");
    norm("/", "/..", "/");
    norm("/", "/../../x", "/x");
    norm("/", "/a/./././.", "/a");
    norm("/", "/a/..", "/");
    norm("/x/y", "z", "/x/y/z");
    norm("/x/y", "../z", "/x/z");
    norm("/x/y", ".", "/x/y");
    norm("/x/y", "../../../..", "/");
    norm("/", "rel", "/rel");
    norm("/", "/a/...", "/a/...");          /* "..." is a name, not a parent */
    norm("/", "/a/.b/..c", "/a/.b/..c");
    norm("/", "/caf\xe9/\xff", "/caf\xe9/\xff"); /* bytes pass through */

    char small[8];
    CHECK(fs_path_normalize("/", 1, "/abcdefgh", small, sizeof small) == -ENAMETOOLONG, "overflow not reported");
    CHECK(fs_path_normalize("/", 1, "", small, sizeof small) == -ENOENT, "empty path must be ENOENT");
    char big[PATH_MAX + 10];
    memset(big, 'a', sizeof big - 1);
    big[0] = '/';
    big[sizeof big - 1] = '\0';
    char out[PATH_MAX];
    CHECK(fs_path_normalize("/", 1, big, out, sizeof out) == -ENAMETOOLONG, "PATH_MAX overflow not reported");

    /* cwd_near. */
    /* The kernel's limits, judged on the caller's string (issue 10 item 13). */
    {
        fs_ns ns = ns_at("/");
        char key[PATH_MAX];
        size_t len;
        static char p[PATH_MAX + 200];
        strcpy(p, "/fanstore/ds/");
        memset(p + 13, 'n', 256);
        p[13 + 256] = '\0';
        CHECK(fs_path_classify(&ns, p, key, sizeof key, &len) == -ENAMETOOLONG, "a 256-byte name is ENAMETOOLONG");
        p[13 + 255] = '\0';
        CHECK(fs_path_classify(&ns, p, key, sizeof key, &len) == FS_PATH_INSIDE, "a 255-byte name is fine");
        strcpy(p, "/fanstore/ds");
        for (size_t n = strlen(p); n + 2 < sizeof p - 1; n += 2)
            strcat(p, "/.");
        CHECK(fs_path_classify(&ns, p, key, sizeof key, &len) == -ENAMETOOLONG,
              "a %zu-byte path that normalises short is still ENAMETOOLONG", strlen(p));
        /* The kernel refuses PATH_MAX bytes or more (NUL not counted): 4096 characters, not 4095. */
        p[PATH_MAX] = '\0';
        if (p[PATH_MAX - 1] == '/')
            p[PATH_MAX - 1] = 'x';
        CHECK(fs_path_classify(&ns, p, key, sizeof key, &len) == -ENAMETOOLONG, "PATH_MAX bytes is too long");
        p[PATH_MAX - 1] = '\0';
        if (p[PATH_MAX - 2] == '/')
            p[PATH_MAX - 2] = '.';
        CHECK(fs_path_classify(&ns, p, key, sizeof key, &len) == FS_PATH_INSIDE, "PATH_MAX-1 bytes fits");
        memset(p, 'o', 300);
        p[0] = '/';
        p[300] = '\0';
        CHECK(fs_path_classify(&ns, p, key, sizeof key, &len) == FS_PATH_OUTSIDE, "outside paths are libc's");
    }
    CHECK(fs_path_cwd_near("/fanstore", 9, "/", 1), "/ is an ancestor of the mount");
    CHECK(fs_path_cwd_near("/fanstore", 9, "/fanstore", 9), "the mount itself is near");
    CHECK(fs_path_cwd_near("/fanstore", 9, "/fanstore/a", 11), "below the mount is near");
    CHECK(!fs_path_cwd_near("/fanstore", 9, "/fanstorex", 10), "/fanstorex is not near");
    CHECK(!fs_path_cwd_near("/fanstore", 9, "/tmp", 4), "/tmp is not near");
    CHECK(fs_path_cwd_near("/mnt/fs", 7, "/mnt", 4), "/mnt is an ancestor of /mnt/fs");

    /* within: whole components only, and never more than mount_len + 1 bytes of the path read. */
    CHECK(fs_path_within("/fanstore", 9, "/fanstore", 9), "the mount is within itself");
    CHECK(fs_path_within("/fanstore/a", 11, "/fanstore", 9), "below the mount is within");
    CHECK(!fs_path_within("/fanstorex", 10, "/fanstore", 9), "/fanstorex is not within");
    CHECK(!fs_path_within("/fan", 4, "/fanstore", 9), "a prefix of the mount is not within");
    CHECK(!fs_path_within("/", 1, "/fanstore", 9), "/ is not within");

    /* Absolute classification. */
    classify(NULL, "/fanstore", "");
    classify(NULL, "/fanstore/", "");
    classify(NULL, "/fanstore/imagenet/train/a.jpg", "imagenet/train/a.jpg");
    classify(NULL, "/fanstore//imagenet/./train/", "imagenet/train");
    classify(NULL, "/fanstorex/a", NULL);
    classify(NULL, "/fanstor", NULL);
    classify(NULL, "/usr/lib/libc.so.6", NULL);
    classify(NULL, "/home/u/.cache/x", NULL);
    classify(NULL, "//fanstore/a", "a");                 /* needs normalising, lands inside */
    classify(NULL, "/tmp/../fanstore/a", "a");
    rewritten(NULL, "/fanstore/..", "/");                 /* leaves the namespace like a mount point */
    rewritten(NULL, "/fanstore/../etc/passwd", "/etc/passwd");
    classify(NULL, "/fanstore/a/../../fanstore/b", "b");
    rewritten(NULL, "/fanstore/a/../..", "/");
    classify(NULL, "/fanstorex/../etc", NULL);           /* never in the mount: forwarded as written */
    classify(NULL, "/usr/./lib", NULL);
    classify(NULL, "/fanstore/../fanstore", "");
    classify(NULL, "", NULL);

    /* Relative classification. */
    classify(NULL, "a", NULL);                            /* unknown cwd: never ours */
    classify("/fanstore/ds", "a/b", "ds/a/b");
    classify("/fanstore/ds", ".", "ds");
    classify("/fanstore/ds", "..", "");
    rewritten("/fanstore/ds", "../..", "/");
    rewritten("/fanstore/ds", "../../etc", "/etc");
    rewritten("/", "fanstore/..", "/");
    classify("/fanstore", "ds", "ds");
    classify("/", "fanstore/ds", "ds");
    classify("/", "etc/passwd", NULL);
    classify("/tmp", "x/y", NULL);
    classify("/tmp", "../fanstore/ds", "ds");
    classify("/tmp", "a/../../fanstore", "");
    classify("/tmp", "..data", NULL);

    /* Another mount. */
    fs_ns ns = { .mount = "/mnt/data", .mount_len = 9 };
    char key[PATH_MAX];
    size_t len;
    CHECK(fs_path_classify(&ns, "/mnt/data/x", key, sizeof key, &len) == FS_PATH_INSIDE && strcmp(key, "x") == 0,
          "other mount");
    CHECK(fs_path_classify(&ns, "/mnt/datax", key, sizeof key, &len) == FS_PATH_OUTSIDE, "other mount prefix");

    if (failures)
        printf("test_path_norm: %d failure(s)\n", failures);
    return failures != 0;
}
