/* ring_producer: Agrona ManyToOneRingBuffer producer over mapped memory (see ring_producer.h).
 * Mirrors ManyToOneRingBuffer.claimCapacity/write: claim by CAS on the tail position against the cached
 * head, a padding record when the claim would wrap, negative length on claim, release of positive length on
 * commit. Never blocks and never allocates. */
#include "ring_producer.h"
#include "wire_layout.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

/* Agrona: maximum payload of a ManyToOneRingBuffer message is capacity / 8. */
#define FS_RING_MAX_MSG_DIVISOR 8u

static inline fs_ring_trailer *trailer(const fs_ring *ring)
{
    return (fs_ring_trailer *)(ring->buf + ring->capacity);
}

static inline fs_ring_record *record_at(const fs_ring *ring, uint32_t index)
{
    return (fs_ring_record *)(ring->buf + index);
}

static inline uint32_t align_up(uint32_t value, uint32_t alignment)
{
    return (value + alignment - 1) & ~(alignment - 1);
}

int fs_ring_init(fs_ring *ring, void *base, uint32_t capacity)
{
    if (ring == NULL || base == NULL || capacity == 0 || (capacity & (capacity - 1)) != 0)
        return -EINVAL;
    if (((uintptr_t)base % FS_RING_ALIGNMENT) != 0)
        return -EINVAL;
    ring->buf = base;
    ring->capacity = capacity;
    return 0;
}

/* Refreshes the head cache from the real head; returns the head. */
static int64_t refresh_head(const fs_ring *ring)
{
    fs_ring_trailer *t = trailer(ring);
    const int64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
    atomic_store_explicit(&t->head_cache, head, memory_order_release);
    return head;
}

/* Claims `required` aligned bytes; on success stores the write index and returns 0, else -EAGAIN. */
static int claim(const fs_ring *ring, uint32_t required, uint32_t *write_index_out)
{
    const uint32_t capacity = ring->capacity;
    const uint32_t mask = capacity - 1;
    fs_ring_trailer *t = trailer(ring);
    _Atomic int64_t *tail_pos = &t->tail;
    int64_t head = atomic_load_explicit(&t->head_cache, memory_order_acquire);
    int64_t tail;
    uint32_t tail_index, padding, write_index;

    do {
        tail = atomic_load_explicit(tail_pos, memory_order_acquire);
        if ((int64_t)required > (int64_t)capacity - (tail - head)) {
            head = atomic_load_explicit(&t->head, memory_order_acquire);
            if ((int64_t)required > (int64_t)capacity - (tail - head))
                return -EAGAIN;
            atomic_store_explicit(&t->head_cache, head, memory_order_release);
        }
        padding = 0;
        tail_index = (uint32_t)tail & mask;
        write_index = tail_index;
        const uint32_t to_end = capacity - tail_index;
        if (required > to_end) {
            /* The record would wrap: pad to the end and write at 0, which needs room in front of the head. */
            uint32_t head_index = (uint32_t)head & mask;
            if (required > head_index) {
                head = refresh_head(ring);
                head_index = (uint32_t)head & mask;
                if (required > head_index)
                    return -EAGAIN;
            }
            write_index = 0;
            padding = to_end;
        }
    } while (!atomic_compare_exchange_weak_explicit(tail_pos, &tail, tail + required + padding,
                                                    memory_order_acq_rel, memory_order_relaxed));

    if (padding != 0) {
        fs_ring_record *pad = record_at(ring, tail_index);
        atomic_store_explicit(&pad->length, -(int32_t)padding, memory_order_release);
        atomic_thread_fence(memory_order_release);
        pad->type = FS_RING_PADDING_TYPE;
        atomic_store_explicit(&pad->length, (int32_t)padding, memory_order_release);
    }
    *write_index_out = write_index;
    return 0;
}

int fs_ring_write(fs_ring *ring, int32_t type, const void *payload, uint32_t length)
{
    if (length > ring->capacity / FS_RING_MAX_MSG_DIVISOR)
        return -EMSGSIZE;
    const uint32_t record_len = length + (uint32_t)sizeof(fs_ring_record);
    uint32_t index;
    const int rc = claim(ring, align_up(record_len, FS_RING_ALIGNMENT), &index);
    if (rc != 0)
        return rc;

    /* Negative length first: the consumer stops here until the record is complete. */
    fs_ring_record *record = record_at(ring, index);
    atomic_store_explicit(&record->length, -(int32_t)record_len, memory_order_release);
    atomic_thread_fence(memory_order_release);
    memcpy(record + 1, payload, length);
    record->type = type;
    atomic_store_explicit(&record->length, (int32_t)record_len, memory_order_release);
    return 0;
}
