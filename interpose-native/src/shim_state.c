/* shim_state: lazy, re-entrant-safe initialisation and the process-wide state behind the wrappers.
 *
 * Initialisation runs once, in the first thread that reaches a wrapper (an atomic phase word; other threads
 * wait for it, which takes microseconds). The initialising thread is marked "inside the shim", so libc
 * calls it makes (getenv, getcwd through the real symbol, dlsym) that reach our wrappers pass straight
 * through instead of recursing. The table is mapped on first use of the prefix, not at start, so the many
 * short processes of a job that never touch the namespace pay nothing for it.
 *
 * Fork: the state is process memory and is copied; a pthread_atfork child handler refreshes the cached pid
 * and re-initialises the locks (another parent thread may have held one across fork). vfork runs no atfork
 * handler, so in a vfork child getpid() differs from the cached pid: that is how wrappers know they must not
 * write shared state (fs_state_in_vfork_child). exec starts a new image: nothing survives.
 *
 * Current directory: always the kernel's. A directory of the namespace is entered as its place in this node's
 * upper tree (upper.h), so the cwd survives vfork, posix_spawn and exec with any environment, and calls the shim
 * does not wrap act on the node's outputs there. A real cwd under the upper directory stands for the namespace
 * path (mount + key): relative paths are then resolved by the shim, and getcwd answers that path. Readers of
 * the cwd use a seqlock; chdir (rare) serialises writers. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rank_dir.h"
#include "real_libc.h"
#include "shim_state.h"
#include "upper.h"

enum { PHASE_NEW = 0, PHASE_INIT = 1, PHASE_INERT = 2, PHASE_ACTIVE = 3 };

static _Atomic int phase;
static fs_state state;
static _Atomic pid_t cached_pid;
static __thread int inside_shim __attribute__((tls_model("initial-exec")));

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static fs_table table;
static _Atomic(const fs_table *) table_ready;

static pthread_mutex_t wire_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(fs_wire *) wire;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static fs_cache cache;
static _Atomic int cache_tried;              /* 0: not yet; 1: tried, cache_ready says how it went */
static _Atomic(const fs_cache *) cache_ready;
static pthread_mutex_t slices_lock = PTHREAD_MUTEX_INITIALIZER;
static fs_slices slices;
static _Atomic int slices_tried;
static _Atomic(const fs_slices *) slices_ready;

static pthread_mutex_t counters_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int counters_tried;
static _Atomic(fs_counters *) counters_ready;

static pthread_mutex_t void_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int void_fd = -1;
static uint64_t void_dev, void_ino;

static pthread_mutex_t cwd_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    _Atomic unsigned seq;
    int      known;      /* 0: unknown (relative paths are then never ours) */
    int      is_virtual;
    int      near;
    size_t   len;
    char     path[PATH_MAX];
} cwd;

void fs_state_enter(void) { inside_shim++; }
void fs_state_leave(void) { inside_shim--; }

static void cwd_store(const char *path, size_t len, int is_virtual)
{
    atomic_fetch_add_explicit(&cwd.seq, 1, memory_order_acq_rel);
    atomic_thread_fence(memory_order_release);
    cwd.known = path != NULL;
    cwd.is_virtual = is_virtual;
    if (path != NULL) {
        memcpy(cwd.path, path, len);
        cwd.path[len] = '\0';
        cwd.len = len;
        cwd.near = fs_path_cwd_near(state.mount, state.mount_len, path, len);
    }
    atomic_fetch_add_explicit(&cwd.seq, 1, memory_order_release);
}

/* Reads the real cwd into the seqlock (caller holds cwd_lock or is the initialiser). */
static void cwd_refresh_real(void)
{
    char buf[PATH_MAX], norm[PATH_MAX], key[PATH_MAX];
    fs_real_getcwd_fn get = REAL(getcwd);
    if (get == NULL || get(buf, sizeof buf) == NULL || buf[0] != '/') {
        cwd_store(NULL, 0, 0);
        return;
    }
    ssize_t n = fs_path_normalize("/", 1, buf, norm, sizeof norm);
    if (n < 0) {
        cwd_store(NULL, 0, 0);
        return;
    }
    int kl = strstr(norm, "/" FS_RANK_UPPER_DIR) != NULL ? fs_up_key(&state, norm, (size_t)n, key, sizeof key) : -1;
    if (kl >= 0 && state.mount_len + 1 + (size_t)kl < sizeof buf) {
        /* A directory of the namespace, entered through its place in the upper tree. */
        memcpy(buf, state.mount, state.mount_len);
        size_t len = state.mount_len;
        if (kl > 0) {
            buf[len++] = '/';
            memcpy(buf + len, key, (size_t)kl);
            len += (size_t)kl;
        }
        buf[len] = '\0';
        cwd_store(buf, len, 1);
        return;
    }
    /* A real directory below the mount (the mount exists on disk): the namespace hides it. */
    cwd_store(norm, (size_t)n, fs_path_within(norm, (size_t)n, state.mount, state.mount_len));
}

static void after_fork_child(void)
{
    atomic_store(&cached_pid, getpid());
    pthread_mutex_init(&table_lock, NULL);
    pthread_mutex_init(&wire_lock, NULL);
    pthread_mutex_init(&cache_lock, NULL);
    pthread_mutex_init(&slices_lock, NULL);
    pthread_mutex_init(&counters_lock, NULL);
    pthread_mutex_init(&void_lock, NULL);
    pthread_mutex_init(&cwd_lock, NULL);
}

/* The pid is cached when the library is loaded, not at the lazy initialisation: a process whose first
 * wrapped call happens in a vfork child would otherwise cache the child's pid in the parent's memory and
 * take itself for a vfork child ever after. Nothing else is done this early. */
__attribute__((constructor(101))) static void remember_pid(void)
{
    atomic_store(&cached_pid, getpid());
    pthread_atfork(NULL, NULL, after_fork_child);
}

static int initialise(void)
{
    const char *shm = getenv("FANSTORE_SHM_DIR");
    if (shm == NULL || shm[0] == '\0' || strlen(shm) >= sizeof state.shm_dir)
        return PHASE_INERT;
    const char *mount = getenv("FANSTORE_MOUNT");
    if (mount == NULL || mount[0] == '\0')
        mount = "/fanstore";
    ssize_t n = fs_path_normalize("/", 1, mount, state.mount, sizeof state.mount);
    if (n <= 1)
        return PHASE_INERT;   /* "/" as the mount would capture every path: refuse, stay out of the way */
    state.mount_len = (size_t)n;
    strcpy(state.shm_dir, shm);
    cwd_refresh_real();
    return PHASE_ACTIVE;
}

const fs_state *fs_state_get(void)
{
    if (inside_shim)
        return NULL;
    int p = atomic_load_explicit(&phase, memory_order_acquire);
    if (__builtin_expect(p == PHASE_ACTIVE, 1))
        return &state;
    if (p == PHASE_INERT)
        return NULL;
    int expected = PHASE_NEW;
    if (atomic_compare_exchange_strong(&phase, &expected, PHASE_INIT)) {
        int saved = errno;
        inside_shim++;
        int result = initialise();
        inside_shim--;
        errno = saved;
        atomic_store_explicit(&phase, result, memory_order_release);
        return result == PHASE_ACTIVE ? &state : NULL;
    }
    while ((p = atomic_load_explicit(&phase, memory_order_acquire)) == PHASE_INIT)
        sched_yield();
    return p == PHASE_ACTIVE ? &state : NULL;
}

const fs_table *fs_state_table(void)
{
    const fs_table *t = atomic_load_explicit(&table_ready, memory_order_acquire);
    if (t != NULL)
        return t;
    /* Also in a vfork child: the mapping is made with raw calls and no allocation, in the memory the child shares
     * with its parent, which then finds it ready (a chdir into the namespace before exec needs the table). */
    pthread_mutex_lock(&table_lock);
    t = atomic_load_explicit(&table_ready, memory_order_acquire);
    if (t == NULL) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/" FS_RANK_META_TABLE, state.shm_dir) < (int)sizeof path) {
            inside_shim++;
            int rc = fs_table_open(path, &table);
            inside_shim--;
            if (rc == 0) {
                t = &table;
                atomic_store_explicit(&table_ready, t, memory_order_release);
            }
        }
    }
    pthread_mutex_unlock(&table_lock);
    return t;
}

fs_wire *fs_state_wire(int *err)
{
    fs_wire *w = atomic_load_explicit(&wire, memory_order_acquire);
    if (w != NULL)
        return w;
    if (fs_state_in_vfork_child()) {
        *err = -EIO;
        return NULL;
    }
    pthread_mutex_lock(&wire_lock);
    w = atomic_load_explicit(&wire, memory_order_acquire);
    if (w == NULL) {
        char path[PATH_MAX];
        int rc = -ENAMETOOLONG;
        if (snprintf(path, sizeof path, "%s/" FS_RANK_CONTROL_FILE, state.shm_dir) < (int)sizeof path) {
            inside_shim++;
            rc = fs_wire_attach(&w, path);
            inside_shim--;
        }
        /* Whatever stopped the attach (no ctl file, bad magic, ...), the reader sees a runtime it cannot
         * reach: EIO. ENOENT would contradict the stat the table just answered for the same path. */
        if (rc == 0) {
            fs_counters *c = fs_state_counters();  /* lock order: wire_lock, then counters_lock */
            if (c != NULL)
                fs_wire_count_wakeups(w, &c->value[FS_CTR_WAKE_NS], &c->value[FS_CTR_WAKES]);
            atomic_store_explicit(&wire, w, memory_order_release);
        } else {
            *err = -EIO;
        }
    }
    pthread_mutex_unlock(&wire_lock);
    return w;
}

const fs_cache *fs_state_cache(const fs_table *t)
{
    const fs_cache *c = atomic_load_explicit(&cache_ready, memory_order_acquire);
    if (c != NULL || atomic_load_explicit(&cache_tried, memory_order_acquire))
        return c;
    if (fs_state_in_vfork_child())
        return NULL;
    pthread_mutex_lock(&cache_lock);
    if (!atomic_load_explicit(&cache_tried, memory_order_relaxed)) {
        inside_shim++;
        int rc = fs_cache_attach(&cache, state.shm_dir, t->entry_count, t->local_root, t->local_root_len);
        inside_shim--;
        if (rc == 0)
            atomic_store_explicit(&cache_ready, &cache, memory_order_release);
        atomic_store_explicit(&cache_tried, 1, memory_order_release);
    }
    c = atomic_load_explicit(&cache_ready, memory_order_acquire);
    pthread_mutex_unlock(&cache_lock);
    return c;
}

const fs_slices *fs_state_slices(const fs_table *t)
{
    const fs_slices *v = atomic_load_explicit(&slices_ready, memory_order_acquire);
    if (v != NULL || atomic_load_explicit(&slices_tried, memory_order_acquire))
        return v;
    if (fs_state_in_vfork_child())
        return NULL;
    pthread_mutex_lock(&slices_lock);
    if (!atomic_load_explicit(&slices_tried, memory_order_relaxed)) {
        inside_shim++;
        if (fs_slices_attach(&slices, state.shm_dir, t->entry_count) == 0)
            atomic_store_explicit(&slices_ready, &slices, memory_order_release);
        inside_shim--;
        atomic_store_explicit(&slices_tried, 1, memory_order_release);
    }
    v = atomic_load_explicit(&slices_ready, memory_order_acquire);
    pthread_mutex_unlock(&slices_lock);
    return v;
}

fs_counters *fs_state_counters(void)
{
    fs_counters *c = atomic_load_explicit(&counters_ready, memory_order_acquire);
    if (c != NULL || atomic_load_explicit(&counters_tried, memory_order_acquire) || fs_state_in_vfork_child())
        return c;
    pthread_mutex_lock(&counters_lock);
    if (!atomic_load_explicit(&counters_tried, memory_order_relaxed)) {
        inside_shim++;
        int rc = fs_counters_attach(&c, state.shm_dir);
        inside_shim--;
        if (rc == 0)
            atomic_store_explicit(&counters_ready, c, memory_order_release);
        atomic_store_explicit(&counters_tried, 1, memory_order_release);
    }
    c = atomic_load_explicit(&counters_ready, memory_order_acquire);
    pthread_mutex_unlock(&counters_lock);
    return c;
}

int fs_state_in_vfork_child(void)
{
    return getpid() != atomic_load_explicit(&cached_pid, memory_order_relaxed);
}

static int make_void_dir(void)
{
    char tmpl[PATH_MAX];
    const char *dirs[] = { state.shm_dir, getenv("TMPDIR"), "/tmp" };
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        if (dirs[i] == NULL)
            continue;
        if (snprintf(tmpl, sizeof tmpl, "%s/" FS_RANK_VOID_DIR, dirs[i]) >= (int)sizeof tmpl)
            continue;
        if (mkdtemp(tmpl) == NULL)
            continue;
        int fd = CALL_REAL(-1, open, tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CALL_REAL(-1, rmdir, tmpl);
        if (fd < 0)
            continue;
        struct stat st;
        if (CALL_REAL(-1, fstat, fd, &st) != 0) {
            CALL_REAL(-1, close, fd);
            continue;
        }
        void_dev = st.st_dev;
        void_ino = st.st_ino;
        return fd;
    }
    return -EIO;
}

int fs_state_void_dup(int cloexec)
{
    if (fs_state_in_vfork_child())
        return -EIO;
    pthread_mutex_lock(&void_lock);
    int fd = atomic_load(&void_fd);
    if (fd < 0) {
        fd = make_void_dir();
        if (fd >= 0)
            atomic_store(&void_fd, fd);
    }
    int copy = fd < 0 ? fd : CALL_REAL(-1, fcntl, fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
    if (copy < 0 && fd >= 0)
        copy = -errno;
    pthread_mutex_unlock(&void_lock);
    return copy;
}

void fs_state_void_id(uint64_t *dev, uint64_t *ino)
{
    *dev = void_dev;
    *ino = void_ino;
}

void fs_state_void_lost_if(int fd)
{
    int v = atomic_load_explicit(&void_fd, memory_order_relaxed);
    if (v < 0 || v != fd || fs_state_in_vfork_child())
        return;
    atomic_compare_exchange_strong(&void_fd, &v, -1);
}

void fs_state_void_lost_range(unsigned first, unsigned last)
{
    int v = atomic_load_explicit(&void_fd, memory_order_relaxed);
    if (v >= 0 && (unsigned)v >= first && (unsigned)v <= last)
        fs_state_void_lost_if(v);
}

void fs_state_ns(const fs_state *s, fs_ns *ns, char *buf)
{
    ns->mount = s->mount;
    ns->mount_len = s->mount_len;
    for (;;) {
        unsigned a = atomic_load_explicit(&cwd.seq, memory_order_acquire);
        if (a & 1u) {
            sched_yield();
            continue;
        }
        int known = cwd.known;
        size_t len = cwd.len;
        int near = cwd.near;
        if (known && len < PATH_MAX)
            memcpy(buf, cwd.path, len + 1);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&cwd.seq, memory_order_relaxed) != a)
            continue;
        ns->cwd = known ? buf : NULL;
        ns->cwd_len = len;
        ns->cwd_near = near;
        return;
    }
}

void fs_state_set_cwd(const fs_state *s)
{
    (void)s;
    pthread_mutex_lock(&cwd_lock);
    cwd_refresh_real();
    pthread_mutex_unlock(&cwd_lock);
}

ssize_t fs_state_virtual_cwd(char *buf, size_t cap)
{
    for (;;) {
        unsigned a = atomic_load_explicit(&cwd.seq, memory_order_acquire);
        if (a & 1u) {
            sched_yield();
            continue;
        }
        if (!cwd.is_virtual)
            return -1;
        size_t len = cwd.len;
        if (len < cap)
            memcpy(buf, cwd.path, len + 1);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&cwd.seq, memory_order_relaxed) != a)
            continue;
        return (ssize_t)len;
    }
}
