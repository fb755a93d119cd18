/* output_view: this process's picture of the job's committed outputs, replayed from the output journal.
 * Owns: the journal mapping (read-only), an append-only list of every key ever seen (a key's slot number never
 * changes, so it can stand in a descriptor's fd_table slot), and each key's current state (NULL: absent).
 * Refresh costs one acquire load when nothing was published since the last one. States are immutable once
 * published and never freed, so a reader needs no lock; replay (rare) serialises on a mutex. */
#ifndef FANSTORE_OUTPUT_VIEW_H
#define FANSTORE_OUTPUT_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "shim_state.h"

typedef struct fs_ov_state {
    uint32_t mode;        /* st_mode with type bits */
    uint64_t size;
    int64_t  mtime_ns;
    int32_t  holder;      /* FILE: the rank holding the bytes */
    uint64_t object_id;   /* FILE: staging link h<object_id> on the holder */
    int      own;         /* FILE held by this rank: the upper tree has it, so lookups and listings skip it */
} fs_ov_state;

/* Replays what the runtime published since the last call. No-op without a journal (then nothing exists). */
void fs_ov_refresh(const fs_state *s);

/* The slot of key when it currently exists and is not this rank's own file (refreshes first), else -1; *st gets
 * its state. */
int64_t fs_ov_lookup(const fs_state *s, const char *key, size_t len, const fs_ov_state **st);
/* The slot of key when the journal has it at all, this rank's own files included (refreshes first), else -1. */
int64_t fs_ov_lookup_any(const fs_state *s, const char *key, size_t len);
/* 1 when some current key lies below directory dir ("" is the root); others_only: this rank's own files left out
 * (its upper has them); directories count, since no upper holds another rank's. */
int fs_ov_any_below(const fs_state *s, const char *dir, size_t len, int others_only);

/* Up to cap slots whose keys currently exist below directory dir, this rank's own files included; how many. */
size_t fs_ov_keys_below(const fs_state *s, const char *dir, size_t len, uint32_t *slots, size_t cap);
/* The current state of a slot, this rank's own files included (NULL: absent now). */
const fs_ov_state *fs_ov_state_any(uint32_t slot);

/* Slots ever seen (children are found by scanning them). */
uint32_t fs_ov_count(void);
/* Key and current state of a slot (state NULL: absent now, or this rank's own file). */
const char *fs_ov_key(uint32_t slot, size_t *len);
const fs_ov_state *fs_ov_state_of(uint32_t slot);

/* This rank and its upper directory (from the journal header); -1 / NULL without a journal. */
int fs_ov_rank(void);
const char *fs_ov_upper(void);

#endif
