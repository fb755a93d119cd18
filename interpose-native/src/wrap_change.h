/* wrap_change: what a call that changes the namespace came to, shared by the refusing wrappers (wrap_refuse.c) and
 * the doing ones (wrap_mutate.c).
 * Invariants: its own enum type (gcc rejects mixing it with fs_path_class or fs_resolved); [-4095, -1] is -errno. */
#ifndef FANSTORE_WRAP_CHANGE_H
#define FANSTORE_WRAP_CHANGE_H

#include "shim_state.h"

/* What a change inside the namespace came to, or a negative errno. */
typedef enum fs_change {
    FS_CHANGE_ERRNO   = -4095,   /* no outcome: marks that [-4095, -1] holds -errno values (and keeps it signed) */
    FS_CHANGE_DONE    = 0,       /* the call succeeds with nothing more to do here */
    FS_CHANGE_FORWARD = 1,       /* k->buf is a real path: make the call there */
} fs_change;

/* The wrapper's answer for outcome rc: the real call (an expression) made on k.buf, the errno, or success. */
#define FORWARD_OR(rc, call) ((rc) == FS_CHANGE_FORWARD ? (call) : (rc) < 0 ? fs_fail(rc) : 0)

#endif
