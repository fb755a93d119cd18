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
 * The current directory is cwd.c's, which reads it on first need: this file knows nothing of the namespace's
 * trees (upper.h, output_view.h), which are built on it. */
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

void fs_state_enter(void) { inside_shim++; }
void fs_state_leave(void) { inside_shim--; }

static void after_fork_child(void)
{
    atomic_store(&cached_pid, getpid());
    pthread_mutex_init(&table_lock, NULL);
    pthread_mutex_init(&wire_lock, NULL);
    pthread_mutex_init(&cache_lock, NULL);
    pthread_mutex_init(&slices_lock, NULL);
    pthread_mutex_init(&counters_lock, NULL);
    pthread_mutex_init(&void_lock, NULL);
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
        char path[PATH_MAX], seal[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/" FS_RANK_META_TABLE, state.shm_dir) < (int)sizeof path &&
            snprintf(seal, sizeof seal, "%s/" FS_RANK_META_SEAL, state.shm_dir) < (int)sizeof seal) {
            inside_shim++;
            int rc = fs_table_open_sealed(path, seal, &table);
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
