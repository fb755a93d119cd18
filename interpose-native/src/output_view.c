/* output_view: replay of the output journal into a per-process key index (see output_view.h).
 * Storage: slots in mmap-ed chunks that never move; an open-addressing hash of slot numbers, replaced whole
 * (release) when it grows, the old one kept (readers may still probe it; total memory stays under 2x).
 * Fork: the child inherits the picture; the mutex is re-initialised (another thread may have held it). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "meta_table.h"
#include "output_journal.h"
#include "output_view.h"
#include "rank_dir.h"

#define CHUNK_BITS 12u
#define CHUNK      (1u << CHUNK_BITS)
#define MAX_CHUNKS 1024u

typedef struct ov_slot {
    char                        *key;
    uint32_t                     key_len;
    uint64_t                     hash;
    _Atomic(const fs_ov_state *) state;
} ov_slot;

typedef struct ov_hash {
    uint32_t          mask;
    _Atomic uint32_t  cells[];   /* slot + 1, 0 = empty */
} ov_hash;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int attach_state;              /* 0 not tried, 1 attached, 2 unusable */
static const uint8_t *journal;
static uint64_t consumed;                      /* replayed up to here; under lock */
static _Atomic uint64_t seen;                  /* copy of consumed for the lock-free check */
static ov_slot *chunks[MAX_CHUNKS];
static _Atomic uint32_t count;
static _Atomic(ov_hash *) hash;
static char upper[PATH_MAX];
static int rank = -1;

static void reinit_lock(void) { pthread_mutex_init(&lock, NULL); }
__attribute__((constructor)) static void register_fork(void) { pthread_atfork(NULL, NULL, reinit_lock); }

static uint64_t fnv(const char *k, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)k[i]) * 0x100000001b3ull;
    return h;
}

static ov_slot *slot_at(uint32_t i) { return &chunks[i >> CHUNK_BITS][i & (CHUNK - 1)]; }

static int64_t find(const char *key, size_t len, uint64_t h)
{
    ov_hash *t = atomic_load_explicit(&hash, memory_order_acquire);
    if (t == NULL)
        return -1;
    for (uint32_t i = (uint32_t)h & t->mask;; i = (i + 1) & t->mask) {
        uint32_t c = atomic_load_explicit(&t->cells[i], memory_order_acquire);
        if (c == 0)
            return -1;
        ov_slot *s = slot_at(c - 1);
        if (s->hash == h && s->key_len == len && memcmp(s->key, key, len) == 0)
            return c - 1;
    }
}

static int hash_put(ov_hash *t, uint32_t slot, uint64_t h)
{
    for (uint32_t i = (uint32_t)h & t->mask;; i = (i + 1) & t->mask) {
        if (atomic_load_explicit(&t->cells[i], memory_order_relaxed) == 0) {
            atomic_store_explicit(&t->cells[i], slot + 1, memory_order_release);
            return 0;
        }
    }
}

/* Under lock. The slot of key, added when new; -1 when out of memory. */
static int64_t find_or_add(const char *key, size_t len)
{
    uint64_t h = fnv(key, len);
    int64_t found = find(key, len, h);
    if (found >= 0)
        return found;
    uint32_t n = atomic_load_explicit(&count, memory_order_relaxed);
    if (n >= CHUNK * MAX_CHUNKS)
        return -1;
    if (chunks[n >> CHUNK_BITS] == NULL) {
        void *m = mmap(NULL, sizeof(ov_slot) * CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return -1;
        chunks[n >> CHUNK_BITS] = m;
    }
    ov_hash *t = atomic_load_explicit(&hash, memory_order_relaxed);
    if (t == NULL || (uint64_t)(n + 1) * 2 > (uint64_t)t->mask + 1) {
        uint32_t cap = t == NULL ? 1024u : (t->mask + 1) * 2;
        ov_hash *g = calloc(1, sizeof *g + sizeof(uint32_t) * cap);
        if (g == NULL)
            return -1;
        g->mask = cap - 1;
        for (uint32_t i = 0; i < n; i++)
            hash_put(g, i, slot_at(i)->hash);
        atomic_store_explicit(&hash, g, memory_order_release);   /* the old table stays readable: never freed */
        t = g;
    }
    ov_slot *s = slot_at(n);
    s->key = malloc(len + 1);
    if (s->key == NULL)
        return -1;
    memcpy(s->key, key, len);
    s->key[len] = '\0';
    s->key_len = (uint32_t)len;
    s->hash = h;
    atomic_store_explicit(&s->state, NULL, memory_order_relaxed);
    atomic_store_explicit(&count, n + 1, memory_order_release);
    hash_put(t, n, h);
    return n;
}

static void set_state(const char *key, size_t len, const fs_oj_record *r)
{
    int64_t slot = find_or_add(key, len);
    if (slot < 0)
        return;
    fs_ov_state *st = malloc(sizeof *st);
    if (st == NULL)
        return;
    *st = (fs_ov_state){ .mode = r->mode, .size = r->size, .mtime_ns = r->mtime_ns, .holder = r->holder,
                         .object_id = r->object_id,
                         .own = r->kind == FS_OJ_FILE && r->holder == rank };
    atomic_store_explicit(&slot_at((uint32_t)slot)->state, st, memory_order_release);
}

static void clear_state(const char *key, size_t len)
{
    int64_t slot = find(key, len, fnv(key, len));
    if (slot >= 0)
        atomic_store_explicit(&slot_at((uint32_t)slot)->state, NULL, memory_order_release);
}

/* RENAME: the source and everything below it move to target (replacing what target named). */
static void move(const char *from, size_t flen, const char *to, size_t tlen)
{
    if (flen == tlen && memcmp(from, to, flen) == 0)
        return;
    clear_state(to, tlen);
    uint32_t n = atomic_load_explicit(&count, memory_order_relaxed);
    for (uint32_t i = 0; i < n; i++) {
        ov_slot *s = slot_at(i);
        const fs_ov_state *st = atomic_load_explicit(&s->state, memory_order_relaxed);
        if (st == NULL || s->key_len < flen || memcmp(s->key, from, flen) != 0 ||
            (s->key_len > flen && s->key[flen] != '/'))
            continue;
        char moved[PATH_MAX];
        size_t rest = s->key_len - flen;
        if (tlen + rest >= sizeof moved)
            continue;
        memcpy(moved, to, tlen);
        memcpy(moved + tlen, s->key + flen, rest);
        int64_t d = find_or_add(moved, tlen + rest);
        if (d < 0)
            continue;
        s = slot_at(i);   /* (chunks never move: the pointer stays valid; re-read for clarity) */
        atomic_store_explicit(&slot_at((uint32_t)d)->state, st, memory_order_release);
        atomic_store_explicit(&s->state, NULL, memory_order_release);
    }
}

static void replay(const fs_oj_record *r)
{
    const char *key = fs_oj_key(r);
    switch (r->kind) {
    case FS_OJ_FILE:
    case FS_OJ_DIR:
        set_state(key, r->key_len, r);
        break;
    case FS_OJ_UNLINK:
    case FS_OJ_RMDIR:
        clear_state(key, r->key_len);
        break;
    case FS_OJ_RENAME:
        move(key, r->key_len, fs_oj_target(r), r->target_len);
        break;
    }
}

/* Maps the journal read-only (raw syscalls: no wrapper may run here). */
static void attach(const fs_state *s)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/" FS_RANK_OUTPUT_JOURNAL, s->shm_dir);
    long fd = n > 0 && (size_t)n < sizeof path ? syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC) : -1;
    struct stat st;
    void *m = MAP_FAILED;
    if (fd >= 0 && syscall(SYS_fstat, fd, &st) == 0 && st.st_uid == geteuid() && S_ISREG(st.st_mode))
        m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, (int)fd, 0);
    if (fd >= 0)
        syscall(SYS_close, fd);
    if (m != MAP_FAILED && fs_oj_check(m, (size_t)st.st_size) == 0) {
        const fs_oj_header *h = m;
        memcpy(upper, (const char *)m + FS_OJ_STAGING_OFFSET, h->staging_len);
        upper[h->staging_len] = '\0';
        rank = h->rank;
        journal = m;
        consumed = FS_OJ_HEADER_SIZE;
        atomic_store_explicit(&seen, consumed, memory_order_relaxed);
        atomic_store_explicit(&attach_state, 1, memory_order_release);
        return;
    }
    if (m != MAP_FAILED)
        munmap(m, (size_t)st.st_size);
    atomic_store_explicit(&attach_state, 2, memory_order_release);
}

void fs_ov_refresh(const fs_state *s)
{
    int a = atomic_load_explicit(&attach_state, memory_order_acquire);
    if (a == 2 || s == NULL || fs_state_in_vfork_child())
        return;
    if (a == 1) {
        const fs_oj_header *h = (const fs_oj_header *)journal;
        uint64_t end = atomic_load_explicit(&h->published, memory_order_acquire);
        if (end == atomic_load_explicit(&seen, memory_order_relaxed))
            return;
    }
    pthread_mutex_lock(&lock);
    if (atomic_load_explicit(&attach_state, memory_order_acquire) == 0)
        attach(s);
    if (journal != NULL) {
        const fs_oj_header *h = (const fs_oj_header *)journal;
        uint64_t end = atomic_load_explicit(&h->published, memory_order_acquire);
        if (end > h->capacity)
            end = h->capacity;
        while (consumed < end) {
            const fs_oj_record *r;
            int64_t next = fs_oj_next(journal, consumed, end, &r);
            if (next < 0)
                break;   /* malformed: stop here rather than guess (nothing after it is trusted) */
            replay(r);
            consumed = (uint64_t)next;
        }
        atomic_store_explicit(&seen, consumed, memory_order_relaxed);
    }
    pthread_mutex_unlock(&lock);
}

int64_t fs_ov_lookup_any(const fs_state *s, const char *key, size_t len)
{
    fs_ov_refresh(s);
    int64_t slot = find(key, len, fnv(key, len));
    if (slot < 0 || atomic_load_explicit(&slot_at((uint32_t)slot)->state, memory_order_acquire) == NULL)
        return -1;
    return slot;
}

int fs_ov_any_below(const fs_state *s, const char *dir, size_t len, int others_only)
{
    fs_ov_refresh(s);
    uint32_t n = atomic_load_explicit(&count, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        ov_slot *x = slot_at(i);
        const fs_ov_state *st = atomic_load_explicit(&x->state, memory_order_acquire);
        if (st == NULL || (others_only && st->own))
            continue;
        if (x->key_len > len && (len == 0 || (memcmp(x->key, dir, len) == 0 && x->key[len] == '/')))
            return 1;
    }
    return 0;
}

size_t fs_ov_keys_below(const fs_state *s, const char *dir, size_t len, uint32_t *slots, size_t cap)
{
    fs_ov_refresh(s);
    size_t found = 0;
    uint32_t n = atomic_load_explicit(&count, memory_order_acquire);
    for (uint32_t i = 0; i < n && found < cap; i++) {
        ov_slot *x = slot_at(i);
        if (atomic_load_explicit(&x->state, memory_order_acquire) != NULL && x->key_len > len &&
            (len == 0 || (memcmp(x->key, dir, len) == 0 && x->key[len] == '/')))
            slots[found++] = i;
    }
    return found;
}

const fs_ov_state *fs_ov_state_any(uint32_t slot)
{
    return atomic_load_explicit(&slot_at(slot)->state, memory_order_acquire);
}

int64_t fs_ov_lookup(const fs_state *s, const char *key, size_t len, const fs_ov_state **st)
{
    fs_ov_refresh(s);
    int64_t slot = find(key, len, fnv(key, len));
    if (slot < 0)
        return -1;
    const fs_ov_state *x = atomic_load_explicit(&slot_at((uint32_t)slot)->state, memory_order_acquire);
    if (x == NULL || x->own)
        return -1;
    if (st != NULL)
        *st = x;
    return slot;
}

uint32_t fs_ov_count(void) { return atomic_load_explicit(&count, memory_order_acquire); }

const char *fs_ov_key(uint32_t slot, size_t *len)
{
    ov_slot *s = slot_at(slot);
    *len = s->key_len;
    return s->key;
}

const fs_ov_state *fs_ov_state_of(uint32_t slot)
{
    const fs_ov_state *st = atomic_load_explicit(&slot_at(slot)->state, memory_order_acquire);
    return st != NULL && st->own ? NULL : st;
}

int fs_ov_rank(void) { return atomic_load_explicit(&attach_state, memory_order_acquire) == 1 ? rank : -1; }

const char *fs_ov_upper(void)
{
    return atomic_load_explicit(&attach_state, memory_order_acquire) == 1 ? upper : NULL;
}
