/* ring_producer: the producer half of an Agrona ManyToOneRingBuffer (Agrona 2.x layout) in shared memory.
 * Layout: fs_ring_trailer and fs_ring_record in wire_layout.h (spec: runtime/.../shm/README.md). Any number
 * of producers (threads or processes) write concurrently; the Java runtime is the single consumer.
 * Invariants: positions only grow; a claimed record is marked at once with a negative length so the consumer
 * stops in front of it, and published by a release store of its positive length after type and payload. */
#ifndef FANSTORE_RING_PRODUCER_H
#define FANSTORE_RING_PRODUCER_H

#include <stddef.h>
#include <stdint.h>

typedef struct fs_ring {
    uint8_t *buf;       /* start of the data area; the trailer follows at buf + capacity */
    uint32_t capacity;  /* power of two */
} fs_ring;

/* Wraps an existing ring (base = data area, capacity bytes + trailer). Returns 0 or -EINVAL. */
int fs_ring_init(fs_ring *ring, void *base, uint32_t capacity);

/* Writes one record. Returns 0, -EAGAIN when the ring is full right now (the caller decides whether to retry),
 * or -EMSGSIZE when the payload exceeds the ring's maximum message length (capacity / 8, as in Agrona). */
int fs_ring_write(fs_ring *ring, int32_t type, const void *payload, uint32_t length);

#endif
