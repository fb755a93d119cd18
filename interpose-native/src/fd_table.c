/* fd_table: descriptor number -> shim descriptor, a two-level array of slots.
 *
 * Chunks of FS_FD_CHUNK slots are mmap-ed on first use and never freed (a process that opened 1M
 * descriptors keeps 40 MiB of slots: acceptable, and it keeps readers free of reclamation races).
 * A slot's `tag` word (kind << 32 | index, 0 = free) is the publication point: a writer stores dev/ino,
 * then the tag with release; a reader loads the tag with acquire, then dev/ino. Two threads racing on one
 * descriptor number is the application's race (it cannot know which of close/open wins either).
 * `live` counts registrations ever made so the common "no shim descriptor in this process" case is a
 * single relaxed load. */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/mman.h>

#include "fd_table.h"

#define FS_FD_CHUNK_BITS 10u
#define FS_FD_CHUNK      (1u << FS_FD_CHUNK_BITS)
#define FS_FD_CHUNKS     (FS_FD_MAX / FS_FD_CHUNK)

typedef struct slot {
    _Atomic uint64_t tag;
    _Atomic uint64_t dev;
    _Atomic uint64_t ino;
    _Atomic uint64_t base;
    _Atomic uint64_t len;
} slot;

static _Atomic(slot *) chunks[FS_FD_CHUNKS];
static _Atomic uint32_t ever_used;

static slot *find_slot(int fd, int create)
{
    if (fd < 0 || (unsigned)fd >= FS_FD_MAX)
        return NULL;
    unsigned c = (unsigned)fd >> FS_FD_CHUNK_BITS;
    slot *s = atomic_load_explicit(&chunks[c], memory_order_acquire);
    if (s == NULL) {
        if (!create)
            return NULL;
        /* mmap, not malloc: this may run inside a malloc-less context (after fork in a threaded parent). */
        slot *fresh = mmap(NULL, sizeof(slot) * FS_FD_CHUNK, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (fresh == MAP_FAILED)
            return NULL;
        slot *expected = NULL;
        if (atomic_compare_exchange_strong_explicit(&chunks[c], &expected, fresh, memory_order_acq_rel,
                                                    memory_order_acquire)) {
            s = fresh;
        } else {
            munmap(fresh, sizeof(slot) * FS_FD_CHUNK);
            s = expected;
        }
    }
    return &s[(unsigned)fd & (FS_FD_CHUNK - 1)];
}

static int set_slot(int fd, uint32_t kind, uint32_t index, uint64_t dev, uint64_t ino, uint64_t base,
                    uint64_t len)
{
    if (fd >= 0 && (unsigned)fd >= FS_FD_MAX)
        return -EMFILE;
    slot *s = find_slot(fd, 1);
    if (s == NULL)
        return -ENOMEM;
    atomic_store_explicit(&ever_used, 1, memory_order_relaxed);
    atomic_store_explicit(&s->dev, dev, memory_order_relaxed);
    atomic_store_explicit(&s->ino, ino, memory_order_relaxed);
    atomic_store_explicit(&s->base, base, memory_order_relaxed);
    atomic_store_explicit(&s->len, len, memory_order_relaxed);
    atomic_store_explicit(&s->tag, ((uint64_t)kind << 32) | index, memory_order_release);
    return 0;
}

int fs_fd_set(int fd, uint32_t kind, uint32_t index, uint64_t dev, uint64_t ino)
{
    return set_slot(fd, kind, index, dev, ino, 0, 0);
}

int fs_fd_set_slice(int fd, uint32_t index, uint64_t dev, uint64_t ino, uint64_t base, uint64_t len)
{
    return set_slot(fd, FS_FD_SLICE, index, dev, ino, base, len);
}

void fs_fd_clear(int fd)
{
    if (!atomic_load_explicit(&ever_used, memory_order_relaxed))
        return;
    slot *s = find_slot(fd, 0);
    if (s != NULL)
        atomic_store_explicit(&s->tag, 0, memory_order_release);
}

static uint32_t get_raw(int fd, fs_fd_info *out);

void fs_fd_clear_range(unsigned first, unsigned last, void (*on_output)(int fd))
{
    if (!atomic_load_explicit(&ever_used, memory_order_relaxed))
        return;
    if (last >= FS_FD_MAX)
        last = FS_FD_MAX - 1;
    for (unsigned fd = first; fd <= last && fd >= first; fd++) {
        /* Skip whole chunks that were never mapped. */
        if ((fd & (FS_FD_CHUNK - 1)) == 0 &&
            atomic_load_explicit(&chunks[fd >> FS_FD_CHUNK_BITS], memory_order_acquire) == NULL) {
            fd += FS_FD_CHUNK - 1;
            continue;
        }
        fs_fd_info info;
        if (on_output != NULL && get_raw((int)fd, &info) == FS_FD_OUTPUT)
            on_output((int)fd);
        fs_fd_clear((int)fd);
    }
}

uint32_t fs_fd_get(int fd, fs_fd_info *out)
{
    uint32_t kind = get_raw(fd, out);
    if (kind == FS_FD_SLICE)
        return out->kind = FS_FD_FILE;
    return kind == FS_FD_OUTPUT ? FS_FD_NONE : kind;
}

int fs_fd_get_slice(int fd, fs_fd_info *out)
{
    return get_raw(fd, out) == FS_FD_SLICE;
}

static void each_of(uint32_t kind, void (*fn)(int fd, const fs_fd_info *info, void *arg), void *arg)
{
    if (!atomic_load_explicit(&ever_used, memory_order_relaxed))
        return;
    for (unsigned c = 0; c < FS_FD_CHUNKS; c++) {
        if (atomic_load_explicit(&chunks[c], memory_order_acquire) == NULL)
            continue;
        for (unsigned i = 0; i < FS_FD_CHUNK; i++) {
            int fd = (int)(c * FS_FD_CHUNK + i);
            fs_fd_info info;
            if (get_raw(fd, &info) == kind)
                fn(fd, &info, arg);
        }
    }
}

void fs_fd_each_slice(void (*fn)(int fd, const fs_fd_info *info, void *arg), void *arg)
{
    each_of(FS_FD_SLICE, fn, arg);
}

void fs_fd_each_output(void (*fn)(int fd, const fs_fd_info *info, void *arg), void *arg)
{
    each_of(FS_FD_OUTPUT, fn, arg);
}

uint32_t fs_fd_get_output(int fd, fs_fd_info *out)
{
    return get_raw(fd, out) == FS_FD_OUTPUT ? FS_FD_OUTPUT : FS_FD_NONE;
}

static uint32_t get_raw(int fd, fs_fd_info *out)
{
    if (!atomic_load_explicit(&ever_used, memory_order_relaxed))
        return FS_FD_NONE;
    slot *s = find_slot(fd, 0);
    if (s == NULL)
        return FS_FD_NONE;
    uint64_t tag = atomic_load_explicit(&s->tag, memory_order_acquire);
    if (tag == 0)
        return FS_FD_NONE;
    out->kind = (uint32_t)(tag >> 32);
    out->index = (uint32_t)tag;
    out->dev = atomic_load_explicit(&s->dev, memory_order_relaxed);
    out->ino = atomic_load_explicit(&s->ino, memory_order_relaxed);
    out->slice = out->kind == FS_FD_SLICE;
    out->base = atomic_load_explicit(&s->base, memory_order_relaxed);
    out->len = atomic_load_explicit(&s->len, memory_order_relaxed);
    return out->kind;
}

void fs_fd_copy(int fd, int newfd)
{
    fs_fd_info info;
    if (get_raw(fd, &info) != FS_FD_NONE)
        set_slot(newfd, info.kind, info.index, info.dev, info.ino, info.base, info.len);
    else
        fs_fd_clear(newfd);
}
