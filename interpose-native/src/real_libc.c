/* real_libc: lazy, thread-safe dlsym(RTLD_NEXT) resolution of the functions the shim wraps.
 * Owns: the fs_real_*_ptr pointers. A pointer goes from NULL to its final value once (benign race: every
 * resolver stores the same address). A thread-local depth counter refuses nested resolution (dlsym calling
 * back into a wrapper), which would otherwise recurse without end; the caller then sees ENOSYS. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "real_libc.h"

static __thread int resolving __attribute__((tls_model("initial-exec")));

static void *resolve(const char *name)
{
    if (resolving)
        return NULL;
    resolving = 1;
    void *p = dlsym(RTLD_NEXT, name);
    resolving = 0;
    return p;
}

/* Before glibc 2.33, stat, lstat, fstat, fstatat (and their 64 names) are no symbols (the headers inlined them into
 * __xstat and friends), so dlsym finds none; the shim's own calls to them then use the system call itself, which
 * is all glibc's would do (struct stat and stat64 are the kernel's layout on x86_64 and aarch64). */
static int compat_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    return (int)syscall(SYS_newfstatat, dirfd, path, st, flags);
}
static int compat_stat(const char *path, struct stat *st) { return compat_fstatat(AT_FDCWD, path, st, 0); }
static int compat_lstat(const char *path, struct stat *st)
{
    return compat_fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}
static int compat_fstat(int fd, struct stat *st) { return (int)syscall(SYS_fstat, fd, st); }

static void *compat_for(const char *name)
{
    static const struct { const char *name; void *fn; } table[] = {
        { "stat", (void *)compat_stat }, { "stat64", (void *)compat_stat },
        { "lstat", (void *)compat_lstat }, { "lstat64", (void *)compat_lstat },
        { "fstat", (void *)compat_fstat }, { "fstat64", (void *)compat_fstat },
        { "fstatat", (void *)compat_fstatat }, { "fstatat64", (void *)compat_fstatat },
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0)
            return table[i].fn;
    return NULL;
}

#define FS_REAL_DEFINE(ret, name, params) \
    fs_real_##name##_fn fs_real_##name##_ptr; \
    fs_real_##name##_fn fs_real_##name##_resolve(void) \
    { \
        fs_real_##name##_fn f = (fs_real_##name##_fn)resolve(#name); \
        if (f == NULL) \
            f = (fs_real_##name##_fn)compat_for(#name); \
        if (f) \
            __atomic_store_n(&fs_real_##name##_ptr, f, __ATOMIC_RELEASE); \
        return f; \
    }
FS_REAL_FUNCTIONS(FS_REAL_DEFINE)
#undef FS_REAL_DEFINE
