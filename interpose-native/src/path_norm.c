/* path_norm: turns what an application passed into either "not ours" or a table key.
 *
 * The `..` rule: normalisation is lexical, like a shell's `cd -L`. `/fanstore/a/..` is `/fanstore`, and
 * `/fanstore/..` is `/`: going above the mount leaves the namespace exactly as leaving a real mount point
 * would, and the result is an ordinary outside path handed to libc. Nothing can name a key outside the
 * mount, and nothing outside can be reached as a key. A symlink inside the namespace followed by `..`
 * resolves lexically (documented deviation from the kernel, which follows the link first).
 *
 * Fast path: an absolute path that neither starts with the mount nor contains a `.`/`..`/empty component
 * cannot normalise into the mount, so it is rejected after a compare and one byte scan with no copy. */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "path_norm.h"

/* fs_path_normalize, also telling whether the lexical walk ever stood in the mount (*touched). */
static ssize_t normalize_walk(const char *base, size_t base_len, const char *path, char *out, size_t cap,
                              const char *mount, size_t mount_len, int *touched)
{
    if (path[0] == '\0')
        return -ENOENT;
    size_t n = 0;
    if (path[0] != '/') {
        /* base is already normalised: copy it, minus the lone "/" of the root. */
        if (base_len == 1)
            base_len = 0;
        if (base_len + 1 > cap)
            return -ENAMETOOLONG;
        memcpy(out, base, base_len);
        n = base_len;
        if (mount != NULL && fs_path_within(out, n, mount, mount_len))
            *touched = 1;
    }
    const char *p = path;
    for (;;) {
        while (*p == '/')
            p++;
        if (*p == '\0')
            break;
        const char *c = p;
        while (*p != '/' && *p != '\0')
            p++;
        size_t clen = (size_t)(p - c);
        if (clen == 1 && c[0] == '.')
            continue;
        if (clen == 2 && c[0] == '.' && c[1] == '.') {
            while (n > 0 && out[n - 1] != '/')
                n--;
            if (n > 0)
                n--;               /* drop the slash too; at the root this stays 0 */
            continue;
        }
        if (n + 1 + clen + 1 > cap)
            return -ENAMETOOLONG;
        out[n++] = '/';
        memcpy(out + n, c, clen);
        n += clen;
        if (mount != NULL && n == mount_len && memcmp(out, mount, n) == 0)
            *touched = 1;
    }
    if (n == 0) {
        if (cap < 2)
            return -ENAMETOOLONG;
        out[n++] = '/';
    }
    out[n] = '\0';
    return (ssize_t)n;
}

ssize_t fs_path_normalize(const char *base, size_t base_len, const char *path, char *out, size_t cap)
{
    return normalize_walk(base, base_len, path, out, cap, NULL, 0, NULL);
}

int fs_path_cwd_near(const char *mount, size_t mount_len, const char *cwd, size_t cwd_len)
{
    if (cwd_len == 1 && cwd[0] == '/')
        return 1;
    size_t m = cwd_len < mount_len ? cwd_len : mount_len;
    if (memcmp(cwd, mount, m) != 0)
        return 0;
    if (cwd_len == mount_len)
        return 1;
    return cwd_len < mount_len ? mount[cwd_len] == '/' : cwd[mount_len] == '/';
}

/* Does the absolute path start with the mount as a whole component? strnlen bounds the read to the
 * mount's length plus one, so a long outside path costs no full scan here. */
static inline int starts_with_mount(const fs_ns *ns, const char *path)
{
    return fs_path_within(path, strnlen(path, ns->mount_len + 1), ns->mount, ns->mount_len);
}

/* Does the path hold an empty, "." or ".." component (anything normalisation would change)? */
static inline int needs_normalising(const char *p)
{
    /* Two vectorised scans in libc beat one byte loop on typical 20-60 byte paths. */
    if (strstr(p, "//") != NULL)
        return 1;
    for (const char *s = p; (s = strstr(s, "/.")) != NULL; s += 2) {
        char d = s[2];
        if (d == '/' || d == '\0' || (d == '.' && (s[3] == '/' || s[3] == '\0')))
            return 1;
    }
    return 0;
}

/* Relative path: does it contain a ".." component? */
static inline int has_dotdot(const char *p)
{
    for (const char *s = p; (s = strstr(s, "..")) != NULL; s += 2) {
        if ((s == p || s[-1] == '/') && (s[2] == '/' || s[2] == '\0'))
            return 1;
    }
    return 0;
}

/* What the kernel would refuse before any lookup: a path of PATH_MAX bytes or more (NUL included), or a
 * component longer than NAME_MAX. Checked on the caller's string, not the normalised one: "a/../a/../..."
 * past PATH_MAX is too long for the kernel even though it normalises to little. */
static int too_long(const char *path)
{
    size_t run = 0;
    for (size_t i = 0; path[i] != '\0'; i++) {
        if (i + 1 >= PATH_MAX)
            return 1;
        run = path[i] == '/' ? 0 : run + 1;
        if (run > NAME_MAX)
            return 1;
    }
    return 0;
}

fs_path_class fs_path_classify(const fs_ns *ns, const char *path, char *key, size_t cap, size_t *key_len)
{
    if (path[0] == '/') {
        if (!starts_with_mount(ns, path) && !needs_normalising(path))
            return FS_PATH_OUTSIDE;
    } else {
        if (path[0] == '\0' || ns->cwd == NULL)
            return FS_PATH_OUTSIDE;
        if (!ns->cwd_near && !has_dotdot(path))
            return FS_PATH_OUTSIDE;
    }
    int touched = 0;
    ssize_t n = normalize_walk(ns->cwd, ns->cwd_len, path, key, cap, ns->mount, ns->mount_len, &touched);
    if (n < 0)
        return (int)n;
    size_t len = (size_t)n;
    int inside = fs_path_within(key, len, ns->mount, ns->mount_len);
    if ((inside || touched) && too_long(path))
        return -ENAMETOOLONG;
    if (!inside) {
        /* The kernel cannot walk through a mount that does not exist on disk (or through our void cwd):
         * hand it the path we resolved instead. */
        if (touched) {
            *key_len = len;
            return FS_PATH_REWRITTEN;
        }
        return FS_PATH_OUTSIDE;
    }
    if (len == ns->mount_len) {
        key[0] = '\0';
        *key_len = 0;
        return FS_PATH_INSIDE;
    }
    size_t klen = len - ns->mount_len - 1;
    memmove(key, key + ns->mount_len + 1, klen + 1);
    *key_len = klen;
    return FS_PATH_INSIDE;
}
