/* timing: every timing constant of the shim, in one table, each with the reason for its value on the line above.
 * Owns: how long the shim waits, sleeps and trusts. Java twin: org.fanstore.runtime.timing.Timing (TimingOrderTest
 * reads this file: keep each definition on one line, `#define FS_<NAME>_NS <number>L` or `LL`, nothing after it).
 * Invariants: FS_WAIT_SLICE_NS < FS_HEARTBEAT_STALE_NS < FS_REQUEST_DEADLINE_NS (a bound inside a wait is shorter
 * than the wait around it); the first three equal ControlFileDescriptor's, which the runtime also obeys. */
#ifndef FANSTORE_TIMING_H
#define FANSTORE_TIMING_H

/* A heartbeat older than this means a dead runtime if its process is also gone or stopped (shm README 4.). */
#define FS_HEARTBEAT_STALE_NS 3000000000LL
/* A request gives up after this long: a slow runtime is waited for, a wedged one is not waited for forever. */
#define FS_REQUEST_DEADLINE_NS 30000000000LL
/* Longest single futex wait: between slices the client checks the deadline and that the runtime is alive. */
#define FS_WAIT_SLICE_NS 100000000LL
/* Pause between sweeps over a full slot table or attempts on a full ring: short, but a sleep, not a spin. */
#define FS_BUSY_RETRY_NS 200000L

#endif
