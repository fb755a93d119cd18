/* wire_layout: byte offsets of the control file `ctl` (request ring + response slots).
 * Specification: runtime/src/main/java/org/fanstore/runtime/shm/README.md; Java twin: ControlFileDescriptor.
 * Only offsets live here; the logic is in wire_client.c and ring_producer.c. */
#ifndef FANSTORE_WIRE_LAYOUT_H
#define FANSTORE_WIRE_LAYOUT_H

#define FS_CTL_MAGIC              "FANSCTL1"
#define FS_CTL_VERSION            1u
#define FS_CTL_HEADER_SIZE        4096u

#define FS_CTL_MAGIC_OFF          0
#define FS_CTL_VERSION_OFF        8
#define FS_CTL_SLOT_COUNT_OFF     12
#define FS_CTL_SLOT_SIZE_OFF      16
#define FS_CTL_RING_CAPACITY_OFF  20
#define FS_CTL_RING_OFFSET_OFF    24
#define FS_CTL_SLOTS_OFFSET_OFF   32
#define FS_CTL_SERVER_PID_OFF     40
#define FS_CTL_SERVER_STATE_OFF   44
#define FS_CTL_HEARTBEAT_OFF      48
#define FS_CTL_DOORBELL_OFF       56

#define FS_SERVER_RUNNING         1u
#define FS_SERVER_STOPPING        2u

/* Agrona ring buffer trailer, relative to the ring's start + capacity. */
#define FS_RING_TRAILER_LENGTH    768u
#define FS_RING_TAIL_OFF          128u
#define FS_RING_HEAD_CACHE_OFF    256u
#define FS_RING_HEAD_OFF          384u
#define FS_RING_RECORD_HEADER     8u
#define FS_RING_ALIGNMENT         8u
#define FS_RING_PADDING_TYPE      (-1)
#define FS_RING_MSG_OPEN_REQUEST  1
#define FS_RING_REQUEST_LENGTH    8u   /* payload of a request record: u32 slot index, u32 slot sequence */

/* Slot fields. State (low half) and owner pid (high half) form one 8-byte claim word: a client claims a slot
 * with a single 64-bit CAS {FREE, any} -> {CLAIMED, its pid}, so the sweeper never sees a fresh claim paired
 * with the previous owner's pid. Little-endian only (x86-64, aarch64). */
#define FS_SLOT_ALIGNMENT         64u
#define FS_SLOT_CLAIM_WORD_OFF    0
#define FS_SLOT_STATE_OFF         0
#define FS_SLOT_OWNER_PID_OFF     4
#define FS_SLOT_SEQUENCE_OFF      8
#define FS_SLOT_OP_OFF            12
#define FS_SLOT_FLAGS_OFF         16
#define FS_SLOT_RESULT_OFF        20
#define FS_SLOT_REQ_LEN_OFF       24
#define FS_SLOT_RESP_LEN_OFF      28
#define FS_SLOT_ENTRY_OFF         32
#define FS_SLOT_GENERATION_OFF    40
#define FS_SLOT_PAYLOAD_OFF       64

#define FS_SLOT_FREE              0u
#define FS_SLOT_CLAIMED           1u
#define FS_SLOT_SUBMITTED         2u
#define FS_SLOT_DONE              3u
#define FS_SLOT_ABANDONED         4u

#define FS_OP_OPEN                1u
#define FS_ENTRY_NONE             0xFFFFFFFFu

#define FS_HEARTBEAT_STALE_NS     3000000000LL
#define FS_REQUEST_DEADLINE_NS    30000000000LL
#define FS_WAIT_SLICE_NS          100000000LL

#endif
