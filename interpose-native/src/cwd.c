/* cwd: the current directory (see cwd.h). The picture is read on first need rather than when the shim starts,
 * so the many short processes of a job that never use a relative path pay nothing for it.
 * Fork: the child inherits the picture; the mutex is re-initialised (another thread may have held it). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "cwd.h"
#include "real_libc.h"
#include "upper.h"

typedef struct picture {
    int    known;        /* 0: unknown (relative paths are then never ours) */
    int    is_virtual;   /* a namespace directory: path is its namespace path */
    int    near;         /* fs_path_cwd_near of path */
    size_t len;
    char   path[PATH_MAX];
} picture;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int loaded;         /* the picture has been read once; under lock until then */
static _Atomic unsigned seq;       /* odd while the picture is being written */
static picture cwd;

static void reinit_lock(void) { pthread_mutex_init(&lock, NULL); }
__attribute__((constructor)) static void register_fork(void) { pthread_atfork(NULL, NULL, reinit_lock); }

/* The kernel's cwd into p: a real directory of the upper tree stands for its namespace path. */
static void read_real(const fs_state *s, picture *p)
{
    char buf[PATH_MAX], norm[PATH_MAX];
    *p = (picture){ .known = 0 };
    fs_real_getcwd_fn get = REAL(getcwd);
    if (get == NULL || get(buf, sizeof buf) == NULL || buf[0] != '/')
        return;
    ssize_t n = fs_path_normalize("/", 1, buf, norm, sizeof norm);
    if (n < 0)
        return;
    int m = strstr(norm, "/" FS_RANK_UPPER_DIR) != NULL
          ? fs_up_mount_path(s, norm, (size_t)n, p->path, sizeof p->path) : -ENOENT;
    if (m >= 0) {
        p->len = (size_t)m;
        p->is_virtual = 1;
    } else {
        /* A real directory below the mount (the mount exists on disk): the namespace hides it. */
        memcpy(p->path, norm, (size_t)n + 1);
        p->len = (size_t)n;
        p->is_virtual = fs_path_within(norm, (size_t)n, s->mount, s->mount_len);
    }
    p->known = 1;
    p->near = fs_path_cwd_near(s->mount, s->mount_len, p->path, p->len);
}

/* Caller holds lock. */
static void store(const picture *p)
{
    atomic_fetch_add_explicit(&seq, 1, memory_order_acq_rel);
    atomic_thread_fence(memory_order_release);
    cwd.known = p->known;
    cwd.is_virtual = p->is_virtual;
    cwd.near = p->near;
    cwd.len = p->len;
    memcpy(cwd.path, p->path, p->len + 1);
    atomic_fetch_add_explicit(&seq, 1, memory_order_release);
}

void fs_cwd_refresh(const fs_state *s)
{
    picture p;
    pthread_mutex_lock(&lock);
    read_real(s, &p);
    store(&p);
    atomic_store_explicit(&loaded, 1, memory_order_release);
    pthread_mutex_unlock(&lock);
}

/* Copies the kept picture (path into buf when known and it fits cap) after reading it once; a vfork child with
 * none kept reads its own instead of writing its parent's. */
static void snapshot(const fs_state *s, picture *p, char *buf, size_t cap)
{
    if (!atomic_load_explicit(&loaded, memory_order_acquire)) {
        if (fs_state_in_vfork_child()) {
            read_real(s, p);
            if (p->known && p->len < cap)
                memcpy(buf, p->path, p->len + 1);
            return;
        }
        pthread_mutex_lock(&lock);
        if (!atomic_load_explicit(&loaded, memory_order_relaxed)) {
            read_real(s, p);
            store(p);
            atomic_store_explicit(&loaded, 1, memory_order_release);
        }
        pthread_mutex_unlock(&lock);
    }
    for (;;) {
        unsigned a = atomic_load_explicit(&seq, memory_order_acquire);
        if (a & 1u) {
            sched_yield();
            continue;
        }
        p->known = cwd.known;
        p->is_virtual = cwd.is_virtual;
        p->near = cwd.near;
        p->len = cwd.len;
        if (p->known && p->len < cap)
            memcpy(buf, cwd.path, p->len + 1);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&seq, memory_order_relaxed) == a)
            return;
    }
}

void fs_cwd_ns(const fs_state *s, fs_ns *ns, char *buf)
{
    picture p;
    snapshot(s, &p, buf, PATH_MAX);
    ns->mount = s->mount;
    ns->mount_len = s->mount_len;
    ns->cwd = p.known ? buf : NULL;
    ns->cwd_len = p.len;
    ns->cwd_near = p.near;
}

ssize_t fs_cwd_virtual(const fs_state *s, char *buf, size_t cap)
{
    picture p;
    snapshot(s, &p, buf, cap);
    return p.is_virtual ? (ssize_t)p.len : -1;
}
