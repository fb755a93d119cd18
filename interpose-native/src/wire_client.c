/* wire_client: the shim's side of the shim <-> runtime protocol (spec: runtime/.../shm/README.md).
 * Owns: mapping `ctl`, claiming a response slot, posting a ring record, waiting for the answer.
 * Invariants: every wait is bounded (futex slices of <= FS_WAIT_SLICE_NS, overall FS_REQUEST_DEADLINE_NS); only a
 * runtime that stopped serving (STOPPING) or died (its ctl.lock free, whatever the PID namespace) fails a request
 * early (server_alive); a slow one (stale heartbeat, lock held: starved, in a GC pause, SIGSTOPped) is waited for;
 * a slot is ours from the claim CAS until we store FREE (after DONE) or ABANDONED (after giving up), and while it
 * is, this process holds an OFD read lock on byte <slot> of <ctl>.clients (taken before the CAS, dropped after
 * leaving the slot): the runtime's sweeper frees a slot only if it can write-lock that byte, so a client's
 * liveness never depends on its pid or PID namespace; the request path neither allocates nor re-enters the shim (raw syscalls for open/fstat/close). No exit(). */
#include "wire_client.h"
#include "client_locks.h"
#include "ring_producer.h"
#include "timing.h"
#include "wire_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FS_NS_PER_SEC    1000000000LL

struct fs_wire {
    fs_ctl_header *header;  /* start of the mapping */
    size_t size;
    uint32_t slot_count;
    uint32_t slot_size;
    uint32_t response_off;  /* offset of the response payload inside a slot */
    uint8_t *slots;
    fs_ring ring;
    /* Where to add each answer's wake-up time (FS_CTR_WAKE_NS / FS_CTR_WAKES of shim.counters), or NULL. */
    _Atomic(_Atomic uint64_t *) wake_ns;
    _Atomic uint64_t *wakes;
    char lock_path[4096];   /* <ctl>.lock: held by the runtime while it lives (shm README, "Liveness") */
    fs_clients clients;      /* <ctl>.clients: we hold byte <slot> while we own the slot (client_locks.h) */
};

/* The pid cached per process; a fork child refreshes it from pthread_atfork (a vfork child keeps the parent's,
 * and must not change any state here, so nothing runs there). */
static pthread_once_t pid_once = PTHREAD_ONCE_INIT;
static _Atomic int32_t cached_pid;
static __thread uint32_t slot_hint;  /* per-thread start index for the claim scan; 0 = not chosen yet */

static void refresh_pid(void)
{
    atomic_store_explicit(&cached_pid, (int32_t)syscall(SYS_getpid), memory_order_relaxed);
}

static void init_pid(void)
{
    refresh_pid();
    pthread_atfork(NULL, NULL, refresh_pid);
}

static inline int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * FS_NS_PER_SEC + ts.tv_nsec;
}

static void sleep_ns(long ns)
{
    struct timespec ts = { 0, ns };
    nanosleep(&ts, NULL);
}

/* Shared (not _PRIVATE) futex ops: the word lives in a MAP_SHARED file mapping used by other processes. */
static void futex_wait(_Atomic uint32_t *word, uint32_t expected, int64_t timeout_ns)
{
    struct timespec ts = { (time_t)(timeout_ns / FS_NS_PER_SEC), (long)(timeout_ns % FS_NS_PER_SEC) };
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expected, &ts, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word, int count)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, count, NULL, NULL, 0);
}

/* The version word is checked before any other field, with acquire: the server stores it last, and another word means a
 * runtime built with other structs (or a half-written header), whose other fields mean nothing to us. */
static int check_layout(const fs_ctl_header *h, size_t size)
{
    if (memcmp(h->magic, FS_CTL_MAGIC, sizeof h->magic) != 0)
        return -EPROTO;
    if (atomic_load_explicit(&h->version, memory_order_acquire) != FS_CTL_VERSION)
        return -EPROTO;
    const uint32_t slots = h->slot_count, slot_size = h->slot_size, cap = h->ring_capacity;
    if (slots == 0 || slot_size < 2 * sizeof(fs_slot_header) || slot_size % FS_SLOT_ALIGNMENT != 0)
        return -EPROTO;
    if (cap == 0 || (cap & (cap - 1)) != 0 || h->ring_offset != FS_CTL_HEADER_SIZE)
        return -EPROTO;
    if (h->slots_offset < h->ring_offset + cap + sizeof(fs_ring_trailer) || h->slots_offset % FS_CTL_HEADER_SIZE != 0)
        return -EPROTO;
    if (h->slots_offset + (uint64_t)slots * slot_size > size)
        return -EPROTO;
    return 0;
}

int fs_wire_attach(fs_wire **out, const char *ctl_path)
{
    if (out == NULL || ctl_path == NULL)
        return -EINVAL;
    pthread_once(&pid_once, init_pid);

    const long fd = syscall(SYS_openat, AT_FDCWD, ctl_path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = 0;
    if (syscall(SYS_fstat, fd, &st) != 0)
        rc = -errno;
    else if (st.st_uid != geteuid() || !S_ISREG(st.st_mode))
        rc = -EACCES;  /* only a control file of our own user is trusted */
    else if ((size_t)st.st_size < FS_CTL_HEADER_SIZE)
        rc = -EPROTO;
    void *map = MAP_FAILED;
    if (rc == 0) {
        map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
        if (map == MAP_FAILED)
            rc = -errno;
    }
    syscall(SYS_close, fd);
    if (rc != 0)
        return rc;

    fs_ctl_header *h = map;
    rc = check_layout(h, (size_t)st.st_size);
    fs_wire *w = rc == 0 ? calloc(1, sizeof *w) : NULL;
    if (rc == 0 && w == NULL)
        rc = -ENOMEM;
    if (rc == 0)
        rc = fs_ring_init(&w->ring, (uint8_t *)map + h->ring_offset, h->ring_capacity);
    if (rc != 0) {
        free(w);
        munmap(map, (size_t)st.st_size);
        return rc;
    }
    w->header = h;
    w->size = (size_t)st.st_size;
    w->slot_count = h->slot_count;
    w->slot_size = h->slot_size;
    w->response_off = fs_slot_response_offset(h->slot_size);
    w->slots = (uint8_t *)map + h->slots_offset;
    const int n = snprintf(w->lock_path, sizeof w->lock_path, "%s.lock", ctl_path);
    if (n < 0 || (size_t)n >= sizeof w->lock_path)
        w->lock_path[0] = '\0';  /* no lock to ask: the pid fallback */
    rc = fs_clients_attach(&w->clients, ctl_path, w->slot_count,
                           (uint32_t)atomic_load_explicit(&cached_pid, memory_order_relaxed));
    if (rc != 0) {
        munmap(map, (size_t)st.st_size);
        free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void fs_wire_detach(fs_wire *w)
{
    if (w == NULL)
        return;
    munmap(w->header, w->size);
    fs_clients_detach(&w->clients, (uint32_t)atomic_load_explicit(&cached_pid, memory_order_relaxed));
    free(w);
}

void fs_wire_count_wakeups(fs_wire *w, _Atomic uint64_t *sum_ns, _Atomic uint64_t *count)
{
    w->wakes = count;
    atomic_store_explicit(&w->wake_ns, sum_ns, memory_order_release);  /* publishes wakes too */
}

/* Adds the time from the runtime's answer stamp to now, if the stamp is plausible and someone counts. */
static void count_wakeup(fs_wire *w, const fs_slot_header *slot)
{
    _Atomic uint64_t *sum = atomic_load_explicit(&w->wake_ns, memory_order_acquire);
    const int64_t answered = slot->answer_ns;
    if (sum == NULL || answered <= 0)
        return;
    const int64_t woken = now_ns();
    if (woken < answered || woken - answered > FS_REQUEST_DEADLINE_NS)
        return;
    atomic_fetch_add_explicit(sum, (uint64_t)(woken - answered), memory_order_relaxed);
    atomic_fetch_add_explicit(w->wakes, 1, memory_order_relaxed);
}

/* Whether process `pid` exists and is neither stopped nor a zombie, from /proc/<pid>/stat read with raw
 * syscalls (no re-entry into the shim). A process we cannot look at counts as gone: then stale = dead. */
static int process_running(int32_t pid)
{
    if (pid <= 0)
        return 0;
    char path[32], stat[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    const long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    const long n = syscall(SYS_read, fd, stat, sizeof stat - 1);
    syscall(SYS_close, fd);
    if (n <= 0)
        return 0;
    stat[n] = '\0';
    const char *end = strrchr(stat, ')');  /* the command name may hold spaces and parentheses */
    if (end == NULL || end[1] != ' ')
        return 0;
    switch (end[2]) {
    case 'T': case 't': case 'Z': case 'X': case 'x':
        return 0;  /* stopped (SIGSTOP, a debugger) or dead */
    default:
        return 1;  /* running, sleeping, in disk wait: alive, perhaps only starved of CPU */
    }
}

/* Whether the runtime's lock on `path` is held: 1 held, 0 free, -1 no lock file (or it cannot be asked). Raw
 * syscalls; this process never locks that file, so closing the descriptor drops nothing. */
static int server_lock_held(const char *path)
{
    const long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    struct flock probe = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0, .l_pid = 0 };
    long rc = syscall(SYS_fcntl, fd, F_OFD_GETLK, &probe);
    if (rc != 0 && errno == EINVAL) {  /* a kernel before 3.15: the process-associated query answers the same */
        probe = (struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
        rc = syscall(SYS_fcntl, fd, F_GETLK, &probe);
    }
    syscall(SYS_close, fd);
    if (rc != 0)
        return -1;
    return probe.l_type != F_UNLCK;
}

/* The runtime is alive if it says RUNNING and its heartbeat is recent, or, with a stale heartbeat, if it still
 * holds its lock: a dispatcher starved of CPU (more readers and runtimes than cores), in a GC pause or stopped is
 * slow, not dead, and its readers wait for it within FS_REQUEST_DEADLINE_NS. Only a runtime whose lock the kernel
 * released (it died) makes a request fail (EIO) before its deadline. The pid is consulted only when there is no
 * lock file (an older server): it means nothing in another PID namespace, and a reused pid is another process. */
static int server_alive(const fs_wire *w, int64_t now)
{
    if (atomic_load_explicit(&w->header->server_state, memory_order_acquire) != FS_SERVER_RUNNING)
        return 0;
    const int64_t beat = atomic_load_explicit(&w->header->heartbeat_ns, memory_order_acquire);
    if (now - beat <= FS_HEARTBEAT_STALE_NS)
        return 1;
    const int saved = errno;
    const int held = server_lock_held(w->lock_path);
    errno = saved;
    return held >= 0 ? held : process_running(w->header->server_pid);
}

static inline fs_slot_header *slot_at(const fs_wire *w, uint32_t index)
{
    return (fs_slot_header *)(w->slots + (size_t)index * w->slot_size);
}

/* One pass over all slots from this thread's hint; the CAS takes state and owner together, under our lock on the
 * slot's byte of the clients file (taken first, so the sweeper never sees our claim without it). */
static int try_claim(fs_wire *w, int fd, uint32_t pid, uint64_t claimed_word, uint32_t *index_out)
{
    const uint32_t n = w->slot_count;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t index = (slot_hint + i) % n;
        _Atomic uint64_t *word = &slot_at(w, index)->claim_word;
        uint64_t seen = atomic_load_explicit(word, memory_order_relaxed);
        if ((uint32_t)seen != FS_SLOT_FREE || fs_clients_take(&w->clients, fd, pid, index) != 0)
            continue;
        if (atomic_compare_exchange_strong_explicit(word, &seen, claimed_word,
                                                    memory_order_acq_rel, memory_order_relaxed)) {
            slot_hint = index;
            *index_out = index;
            return 0;
        }
        fs_clients_drop(&w->clients, fd, index);
    }
    return -EAGAIN;
}

/* Claims a slot; *fd_out is the descriptor whose lock marks it ours (fs_clients_drop with it when leaving). */
static int claim_slot(fs_wire *w, int64_t deadline, uint32_t *index_out, int *fd_out)
{
    const uint32_t pid = (uint32_t)atomic_load_explicit(&cached_pid, memory_order_relaxed);
    const uint64_t claimed_word = ((uint64_t)pid << 32) | FS_SLOT_CLAIMED;
    const int fd = fs_clients_fd(&w->clients, pid);
    if (fd < 0)
        return -EIO;  /* the clients file went away (the job directory was removed) */
    *fd_out = fd;
    if (slot_hint == 0)  /* spread threads and processes over the table */
        slot_hint = (pid * 2654435761u) ^ (uint32_t)((uintptr_t)&slot_hint >> 6);
    for (;;) {
        if (try_claim(w, fd, pid, claimed_word, index_out) == 0)
            return 0;
        const int64_t now = now_ns();
        if (now >= deadline || !server_alive(w, now))
            return -EIO;
        sleep_ns(FS_BUSY_RETRY_NS);
    }
}

/* Posts {slot, sequence} and rings the doorbell; a full ring is retried until the deadline. */
static int post_request(fs_wire *w, uint32_t index, uint32_t sequence, int64_t deadline)
{
    const fs_ring_request record = { .slot = index, .sequence = sequence };
    for (;;) {
        const int rc = fs_ring_write(&w->ring, FS_RING_MSG_OPEN_REQUEST, &record, sizeof record);
        if (rc == 0)
            break;
        const int64_t now = now_ns();
        if (rc != -EAGAIN || now >= deadline || !server_alive(w, now))
            return -EIO;
        sleep_ns(FS_BUSY_RETRY_NS);
    }
    _Atomic uint32_t *doorbell = &w->header->doorbell;
    atomic_fetch_add_explicit(doorbell, 1, memory_order_release);
    futex_wake(doorbell, 1);
    return 0;
}

/* Waits for DONE. Returns 0 on DONE, -EIO after abandoning the slot (or losing it, which a live owner never does). */
static int await_answer(const fs_wire *w, fs_slot_header *slot, int64_t deadline)
{
    _Atomic uint32_t *state = &slot->state;
    for (;;) {
        const uint32_t s = atomic_load_explicit(state, memory_order_acquire);
        if (s == FS_SLOT_DONE)
            return 0;
        if (s != FS_SLOT_SUBMITTED)
            return -EIO;
        const int64_t now = now_ns();
        if (now >= deadline || !server_alive(w, now)) {
            uint32_t expected = FS_SLOT_SUBMITTED;
            if (atomic_compare_exchange_strong_explicit(state, &expected, FS_SLOT_ABANDONED,
                                                        memory_order_acq_rel, memory_order_acquire))
                return -EIO;
            return expected == FS_SLOT_DONE ? 0 : -EIO;  /* answered at the last moment */
        }
        const int64_t left = deadline - now;
        futex_wait(state, FS_SLOT_SUBMITTED, left < FS_WAIT_SLICE_NS ? left : FS_WAIT_SLICE_NS);
    }
}

/* Copies the answer out of a DONE slot; returns 0 or the negative errno the runtime chose. */
static int take_answer(const fs_wire *w, const fs_slot_header *slot, char *out, size_t cap)
{
    const int32_t result = slot->result;
    if (result < 0)
        return result;
    const uint32_t len = slot->response_length;
    if (len >= w->slot_size - w->response_off)
        return -EPROTO;
    if (out == NULL || cap == 0)
        return result;
    if ((size_t)len + 1 > cap)
        return -ENAMETOOLONG;
    memcpy(out, (const uint8_t *)slot + w->response_off, len);
    out[len] = '\0';
    return result;
}

int fs_wire_open(fs_wire *w, const char *key, size_t key_len, uint32_t entry_index, uint64_t generation,
                 int open_flags, char *out, size_t cap)
{
    if (out == NULL || cap == 0)
        return -EINVAL;
    const fs_wire_request r = { .op = FS_OP_OPEN, .key = key, .key_len = key_len, .entry = entry_index,
                                .argument = generation, .flags = open_flags };
    int rc = fs_wire_call(w, &r, out, cap);
    return rc > 0 ? 0 : rc;
}

int fs_wire_call(fs_wire *w, const fs_wire_request *r, char *out, size_t cap)
{
    if (w == NULL || r == NULL || r->key == NULL)
        return -EINVAL;
    const size_t payload = r->key_len + 1 + (r->target != NULL ? r->target_len + 1 : 0);
    if (payload > w->response_off - sizeof(fs_slot_header))
        return -ENAMETOOLONG;
    const int64_t start = now_ns();
    if (!server_alive(w, start))
        return -EIO;
    const int64_t deadline = start + FS_REQUEST_DEADLINE_NS;

    uint32_t index;
    int fd;
    int rc = claim_slot(w, deadline, &index, &fd);
    if (rc != 0)
        return rc;
    fs_slot_header *slot = slot_at(w, index);
    const uint32_t sequence = slot->sequence + 1;
    slot->sequence = sequence;
    slot->op = r->op;
    slot->flags = r->flags;
    slot->result = 0;
    slot->request_length = (uint32_t)payload;
    slot->response_length = 0;
    slot->entry_index = r->entry;
    slot->generation = r->argument;
    slot->answer_ns = 0;
    char *p = (char *)(slot + 1);
    memcpy(p, r->key, r->key_len);
    p[r->key_len] = '\0';
    if (r->target != NULL) {
        memcpy(p + r->key_len + 1, r->target, r->target_len);
        p[r->key_len + 1 + r->target_len] = '\0';
    }

    _Atomic uint32_t *state = &slot->state;
    slot->submit_ns = now_ns();  /* last, so the runtime's ring_wait starts where the request is complete */
    atomic_store_explicit(state, FS_SLOT_SUBMITTED, memory_order_release);  /* publishes the request fields */
    rc = post_request(w, index, sequence, deadline);
    if (rc != 0) {
        /* No record names this sequence, so the runtime can never answer it: the slot is simply ours to free. */
        atomic_store_explicit(state, FS_SLOT_FREE, memory_order_release);
        fs_clients_drop(&w->clients, fd, index);
        return rc;
    }
    rc = await_answer(w, slot, deadline);
    if (rc != 0) {
        fs_clients_drop(&w->clients, fd, index);  /* ABANDONED (or lost): no longer ours */
        return rc;
    }
    count_wakeup(w, slot);
    rc = take_answer(w, slot, out, cap);
    atomic_store_explicit(state, FS_SLOT_FREE, memory_order_release);
    fs_clients_drop(&w->clients, fd, index);
    return rc;
}
