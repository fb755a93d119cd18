/* wire_layout: the control file `ctl` (header, request ring, response slots) as C structs.
 * Specification: runtime/src/main/java/org/fanstore/runtime/shm/README.md; Java twin: ControlFileDescriptor.
 * Golden image both sides parse: tests/vectors/ctl/. Only layout lives here; the logic is in wire_client.c and
 * ring_producer.c. Fields another process writes concurrently are _Atomic; the rest are written by one side
 * before a release store (state, version) publishes them. Native-endian; the claim word assumes little-endian. */
#ifndef FANSTORE_WIRE_LAYOUT_H
#define FANSTORE_WIRE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "timing.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the slot claim word pairs state (low half) and owner (high half): little-endian only"
#endif

#define FS_CTL_MAGIC              "FANSCTL1"
/* Format 3: clients hold a lock on byte <slot> of <ctl>.clients while they own a slot (shm README, "Liveness"). */
#define FS_CTL_FORMAT             3u
/* The header struct sits at the start of a page of its own; the ring starts at the next page. */
#define FS_CTL_HEADER_SIZE        4096u

#define FS_SERVER_RUNNING         1u
#define FS_SERVER_STOPPING        2u

/* The file header (the first 64 bytes of the header page; the rest of the page is zero). */
typedef struct fs_ctl_header {
    char              magic[8];
    _Atomic uint32_t  version;        /* FS_CTL_VERSION, stored last (release) by the server */
    uint32_t          slot_count;
    uint32_t          slot_size;      /* multiple of FS_SLOT_ALIGNMENT */
    uint32_t          ring_capacity;  /* power of two */
    uint64_t          ring_offset;    /* always FS_CTL_HEADER_SIZE */
    uint64_t          slots_offset;   /* ring offset + capacity + ring trailer, rounded up to a page */
    int32_t           server_pid;
    _Atomic uint32_t  server_state;   /* FS_SERVER_RUNNING or FS_SERVER_STOPPING */
    _Atomic int64_t   heartbeat_ns;   /* CLOCK_MONOTONIC, stored by the server's dispatcher loop */
    _Atomic uint32_t  doorbell;       /* futex word: a client adds 1 and wakes it after each ring record */
    uint32_t          reserved;
} fs_ctl_header;

/* Agrona ManyToOneRingBuffer (2.x): `capacity` bytes of records, then this trailer. Each position has a
 * 128-byte line of its own so producers and the consumer do not false-share. */
#define FS_RING_LINE              128u
typedef struct fs_ring_trailer {
    uint8_t           pad0[FS_RING_LINE];
    _Atomic int64_t   tail;           /* producers claim by CAS */
    uint8_t           pad1[FS_RING_LINE - 8];
    _Atomic int64_t   head_cache;     /* producers' cached copy of head */
    uint8_t           pad2[FS_RING_LINE - 8];
    _Atomic int64_t   head;           /* the consumer's position */
    uint8_t           pad3[FS_RING_LINE - 8];
    int64_t           correlation_counter;  /* unused by the protocol */
    uint8_t           pad4[FS_RING_LINE - 8];
    int64_t           consumer_heartbeat;   /* unused by the protocol */
    uint8_t           pad5[FS_RING_LINE - 8];
} fs_ring_trailer;

/* A ring record: this header, then the payload, padded to FS_RING_ALIGNMENT. length counts header + payload;
 * negative while the producer writes it. */
typedef struct fs_ring_record {
    _Atomic int32_t   length;
    int32_t           type;
} fs_ring_record;

#define FS_RING_ALIGNMENT         8u
#define FS_RING_PADDING_TYPE      (-1)
#define FS_RING_MSG_OPEN_REQUEST  1

/* Payload of a request record: which slot, and which claim of it (a stale record names an old sequence). */
typedef struct fs_ring_request {
    uint32_t          slot;
    uint32_t          sequence;
} fs_ring_request;

/* A slot: this header, the request payload (key + NUL), the response payload from the slot's midpoint on.
 * State (low half) and owner pid (high half) form one 8-byte claim word: a client claims a slot with a single
 * 64-bit CAS {FREE, any} -> {CLAIMED, its pid}, so the sweeper never sees a fresh claim paired with the previous
 * owner's pid. The state alone is the futex word the client waits on. */
typedef struct fs_slot_header {
    union {
        _Atomic uint64_t claim_word;
        struct {
            _Atomic uint32_t state;
            int32_t          owner_pid;
        };
    };
    uint32_t          sequence;         /* bumped by the client on every claim */
    uint32_t          op;               /* FS_OP_OPEN */
    int32_t           flags;            /* the caller's open(2) flags */
    int32_t           result;           /* >= 0 success, < 0 a negative errno */
    uint32_t          request_length;   /* key bytes + NUL */
    uint32_t          response_length;  /* path bytes, without the NUL */
    uint32_t          entry_index;      /* FS_ENTRY_NONE if the client resolved none */
    uint32_t          reserved0;
    uint64_t          generation;       /* metadata-table generation the client used */
    /* CLOCK_MONOTONIC ns, for the statistics only (a wrong or zero value only skews a stage, never an answer):
     * the client stamps submit_ns before storing SUBMITTED, the server stamps answer_ns before DONE. */
    int64_t           submit_ns;
    int64_t           answer_ns;
} fs_slot_header;

#define FS_SLOT_ALIGNMENT         64u

#define FS_SLOT_FREE              0u
#define FS_SLOT_CLAIMED           1u
#define FS_SLOT_SUBMITTED         2u
#define FS_SLOT_DONE              3u
#define FS_SLOT_ABANDONED         4u

#define FS_OP_OPEN                1u
/* 2, 3, 4: retired (CREATE, RELEASE, HOLD of the staging design); the runtime answers EINVAL. */
#define FS_OP_UNLINK              5u
#define FS_OP_RENAME              6u
#define FS_OP_MKDIR               7u
#define FS_OP_RMDIR               8u
/* PUBLISH: the file at <upper>/<key> was written and closed; other ranks may see it now. */
#define FS_OP_PUBLISH             9u
#define FS_ENTRY_NONE             0xFFFFFFFFu

/* FS_HEARTBEAT_STALE_NS, FS_REQUEST_DEADLINE_NS and FS_WAIT_SLICE_NS: timing.h. */

/* The version word folds the format number and the size of every struct above that the runtime and the shim
 * must agree on, one byte each, so a runtime and a shim from builds with different structs refuse each other
 * at attach instead of reading garbage: format << 24 | request record << 16 | slot header << 8 | file header. */
#define FS_CTL_VERSION ((FS_CTL_FORMAT << 24) | ((uint32_t)sizeof(fs_ring_request) << 16) | \
                        ((uint32_t)sizeof(fs_slot_header) << 8) | (uint32_t)sizeof(fs_ctl_header))

/* Offset of the response payload inside a slot of slot_size bytes: the midpoint of the payload area. */
static inline uint32_t fs_slot_response_offset(uint32_t slot_size)
{
    return (uint32_t)sizeof(fs_slot_header) + (slot_size - (uint32_t)sizeof(fs_slot_header)) / 2;
}

_Static_assert(sizeof(fs_ctl_header) == 64, "ctl header layout");
_Static_assert(offsetof(fs_ctl_header, version) == 8, "ctl header layout");
_Static_assert(offsetof(fs_ctl_header, slot_count) == 12, "ctl header layout");
_Static_assert(offsetof(fs_ctl_header, slot_size) == 16, "ctl header layout");
_Static_assert(offsetof(fs_ctl_header, ring_capacity) == 20, "ctl header layout");
_Static_assert(offsetof(fs_ctl_header, ring_offset) == 24, "ctl header layout");
_Static_assert(offsetof(fs_ctl_header, slots_offset) == 32, "ctl header layout");
_Static_assert(offsetof(fs_ctl_header, server_pid) == 40, "ctl header layout");
_Static_assert(offsetof(fs_ctl_header, server_state) == 44, "ctl header layout");
_Static_assert(offsetof(fs_ctl_header, heartbeat_ns) == 48, "ctl header layout");
_Static_assert(offsetof(fs_ctl_header, doorbell) == 56, "ctl header layout");
_Static_assert(sizeof(fs_ctl_header) <= FS_CTL_HEADER_SIZE, "ctl header fits its page");

_Static_assert(sizeof(fs_ring_trailer) == 768, "Agrona ring trailer");
_Static_assert(offsetof(fs_ring_trailer, tail) == 128, "Agrona ring trailer");
_Static_assert(offsetof(fs_ring_trailer, head_cache) == 256, "Agrona ring trailer");
_Static_assert(offsetof(fs_ring_trailer, head) == 384, "Agrona ring trailer");
_Static_assert(offsetof(fs_ring_trailer, correlation_counter) == 512, "Agrona ring trailer");
_Static_assert(offsetof(fs_ring_trailer, consumer_heartbeat) == 640, "Agrona ring trailer");
_Static_assert(sizeof(fs_ring_record) == 8 && offsetof(fs_ring_record, type) == 4, "Agrona record header");
_Static_assert(sizeof(fs_ring_request) == 8 && offsetof(fs_ring_request, sequence) == 4, "request record");

_Static_assert(sizeof(fs_slot_header) == 64, "slot layout");
_Static_assert(offsetof(fs_slot_header, claim_word) == 0, "slot layout");
_Static_assert(offsetof(fs_slot_header, state) == 0, "slot layout");
_Static_assert(offsetof(fs_slot_header, owner_pid) == 4, "slot layout");
_Static_assert(offsetof(fs_slot_header, sequence) == 8, "slot layout");
_Static_assert(offsetof(fs_slot_header, op) == 12, "slot layout");
_Static_assert(offsetof(fs_slot_header, flags) == 16, "slot layout");
_Static_assert(offsetof(fs_slot_header, result) == 20, "slot layout");
_Static_assert(offsetof(fs_slot_header, request_length) == 24, "slot layout");
_Static_assert(offsetof(fs_slot_header, response_length) == 28, "slot layout");
_Static_assert(offsetof(fs_slot_header, entry_index) == 32, "slot layout");
_Static_assert(offsetof(fs_slot_header, generation) == 40, "slot layout");
_Static_assert(offsetof(fs_slot_header, submit_ns) == 48, "slot layout");
_Static_assert(offsetof(fs_slot_header, answer_ns) == 56, "slot layout");
_Static_assert(sizeof(fs_slot_header) % FS_SLOT_ALIGNMENT == 0, "payload starts aligned");

_Static_assert(sizeof(_Atomic uint32_t) == 4 && sizeof(_Atomic uint64_t) == 8 && sizeof(_Atomic int64_t) == 8,
               "atomics are plain words (lock-free, no hidden lock)");
/* Each size must fit its byte of the version word. */
_Static_assert(sizeof(fs_ctl_header) < 256 && sizeof(fs_slot_header) < 256 && sizeof(fs_ring_request) < 256,
               "version word");
_Static_assert(FS_CTL_VERSION == 0x03084040u, "version word: ControlFileDescriptor.VERSION says the same");

#endif
