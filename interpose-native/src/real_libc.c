/* real_libc: lazy, thread-safe dlsym(RTLD_NEXT) resolution of the functions the shim wraps.
 * Owns: the fs_real_*_ptr pointers. A pointer goes from NULL to its final value once (benign race: every
 * resolver stores the same address). A thread-local depth counter refuses nested resolution (dlsym calling
 * back into a wrapper), which would otherwise recurse without end; the caller then sees ENOSYS. */
#include <dlfcn.h>
#include <errno.h>

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

#define FS_REAL_DEFINE(ret, name, params) \
    fs_real_##name##_fn fs_real_##name##_ptr; \
    fs_real_##name##_fn fs_real_##name##_resolve(void) \
    { \
        fs_real_##name##_fn f = (fs_real_##name##_fn)resolve(#name); \
        if (f) \
            __atomic_store_n(&fs_real_##name##_ptr, f, __ATOMIC_RELEASE); \
        return f; \
    }
FS_REAL_FUNCTIONS(FS_REAL_DEFINE)
#undef FS_REAL_DEFINE
