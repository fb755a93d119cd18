/* path_norm: lexical path normalisation and the inside/outside-the-mount classification.
 * Pure functions over caller-owned buffers: no state, no allocation, no system calls, safe anywhere
 * (signal handlers, vfork children). See path_norm.c for the `..` rule. */
#ifndef FANSTORE_PATH_NORM_H
#define FANSTORE_PATH_NORM_H

#include <stddef.h>
#include <string.h>
#include <sys/types.h>

/* Where a path lands, or a negative errno when it cannot be judged (its own type: never a resolution's result). */
typedef enum fs_path_class {
    FS_PATH_ERRNO     = -4095,   /* no kind: marks that [-4095, -1] holds -errno values (and keeps the type signed) */
    FS_PATH_OUTSIDE   = 0,
    FS_PATH_INSIDE    = 1,
    FS_PATH_REWRITTEN = 2,
} fs_path_class;

/* The namespace a path is judged against. mount is absolute and normalised, never "/". cwd is the
 * directory relative paths start from (absolute, normalised), or NULL when unknown. */
typedef struct fs_ns {
    const char *mount;
    size_t      mount_len;
    const char *cwd;
    size_t      cwd_len;
    int         cwd_near;   /* cwd is inside the mount or one of its ancestors (see fs_path_cwd_near) */
} fs_ns;

/* The one "is this under the mount" test: 1 when path[0..len) is the mount or lies below it, as whole
 * components ("/fanstorex" is not below "/fanstore"). path must be normalised for the answer to mean
 * anything; only path[0..mount_len] is read. Inline: fs_path_classify asks it on every call. */
static inline int fs_path_within(const char *path, size_t len, const char *mount, size_t mount_len)
{
    return len >= mount_len && memcmp(path, mount, mount_len) == 0 && (len == mount_len || path[mount_len] == '/');
}

/* Normalises path (relative ones against base, absolute/normalised, base_len bytes) into out: absolute,
 * no "." or ".." or empty components, no trailing slash ("/" alone for the root). ".." at "/" stays at "/".
 * Returns the length, or -ENAMETOOLONG when out (cap bytes, NUL included) is too small, -ENOENT for "". */
ssize_t fs_path_normalize(const char *base, size_t base_len, const char *path, char *out, size_t cap);

/* 1 when a relative path from cwd could land inside mount without "..": cwd is the mount, below it, or
 * one of its ancestors. */
int fs_path_cwd_near(const char *mount, size_t mount_len, const char *cwd, size_t cwd_len);

/* Classifies path. FS_PATH_INSIDE: key (NUL-terminated, no leading slash, "" for the mount itself) is in
 * key[0..*key_len]. FS_PATH_OUTSIDE: forward the call to libc unchanged. FS_PATH_REWRITTEN: the path lands
 * outside, but its lexical walk went through the mount (e.g. "/fanstore/..", or "../x" from a virtual cwd),
 * which the kernel could not walk: key holds the absolute normalised path to forward instead.
 * Negative errno on overflow. Off-prefix absolute paths cost one short compare and one scan. */
fs_path_class fs_path_classify(const fs_ns *ns, const char *path, char *key, size_t cap, size_t *key_len);

#endif
