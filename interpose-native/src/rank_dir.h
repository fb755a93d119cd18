/* rank_dir: the names in a job's directories, spelled once on the C side (contract:
 * runtime/src/main/java/org/fanstore/runtime/layout/README.md; Java twin: RankDirectory; golden list:
 * tests/vectors/layout/rank-dir.txt, checked by tests/test_rank_dir.c). The shim is handed its rank's
 * shared-memory directory in FANSTORE_SHM_DIR and finds everything else there by these names.
 * Patterns with <...> are filled in by the writer (the launcher or the runtime); the shim never builds them. */
#ifndef FANSTORE_RANK_DIR_H
#define FANSTORE_RANK_DIR_H

#define FS_RANK_JOB_ROOT        "fanstore-<uid>-<job>"
#define FS_RANK_RANK_DIR        "rank-<rank>"
#define FS_RANK_RANK_LOCK       "rank-<rank>.lock"
#define FS_RANK_META_TABLE      "meta.tbl"
/* Written by the first shim process that validated meta.tbl in full (meta_table.c, fs_table_open_sealed). */
#define FS_RANK_META_SEAL       "meta.tbl.valid"
#define FS_RANK_CONTROL_FILE    "ctl"
#define FS_RANK_CACHE_DIR       "cache"
/* Cache files are "e" then the entry index in decimal; the shim builds the name from the prefix. */
#define FS_RANK_CACHE_FILE_PREFIX "e"
#define FS_RANK_CACHE_FILE      FS_RANK_CACHE_FILE_PREFIX "<index>"
/* A pin: the runtime's answer for a cache file, a second name the shim opens and then unlinks (CachePins.java). */
#define FS_RANK_CACHE_PIN_PREFIX "p"
#define FS_RANK_CACHE_PIN       FS_RANK_CACHE_PIN_PREFIX "<index>-<pin>"
#define FS_RANK_CACHE_REF       "cache.ref"
#define FS_RANK_SHIM_COUNTERS   "shim.counters"
#define FS_RANK_SLICE_MAP       "slices.map"
#define FS_RANK_READY           "ready"
#define FS_RANK_PREFETCHED      "prefetched"
#define FS_RANK_JOB_SECRET      "job-secret"
#define FS_RANK_TASKS_DIR       "tasks"
#define FS_RANK_TASK_TMP        "<local>.tmp"
#define FS_RANK_TASK_RUNNING    "<local>.running"
#define FS_RANK_TASK_DONE       "<local>.done"
/* The void directory's prefix is how an exec'd child recognises a void cwd it inherited. */
#define FS_RANK_VOID_PREFIX     ".fanstore-void."
#define FS_RANK_VOID_DIR        FS_RANK_VOID_PREFIX "XXXXXX"
#define FS_RANK_PARTS_DIR       "parts"
#define FS_RANK_PARTITION_COPY  "<partition>"
#define FS_RANK_FILES_DIR       "files"
/* Beside FILES_DIR (the table's local root): materialised files of at least cache.ref's threshold. */
#define FS_RANK_LOCAL_CACHE_DIR "cache"
/* The rank's upper directory: every output the job writes on this node lives at upper/<key>. */
#define FS_RANK_UPPER_DIR       "upper"
#define FS_RANK_OUTPUT_JOURNAL  "outputs"

/* The whole list, in the golden file's order: X(id, place, name, kind, mode); mode -1: the umask decides. */
#define FS_RANK_DIR_LIST(X)                                         \
    X(JOB_ROOT,       "base",  FS_RANK_JOB_ROOT,       "dir",  0700) \
    X(RANK_DIR,       "job",   FS_RANK_RANK_DIR,       "dir",  -1)   \
    X(RANK_LOCK,      "job",   FS_RANK_RANK_LOCK,      "file", -1)   \
    X(META_TABLE,     "shm",   FS_RANK_META_TABLE,     "file", 0600) \
    X(META_SEAL,      "shm",   FS_RANK_META_SEAL,      "file", 0600) \
    X(CONTROL_FILE,   "shm",   FS_RANK_CONTROL_FILE,   "file", 0600) \
    X(CACHE_DIR,      "shm",   FS_RANK_CACHE_DIR,      "dir",  -1)   \
    X(CACHE_FILE,     "cache", FS_RANK_CACHE_FILE,     "file", -1)   \
    X(CACHE_PIN,      "cache", FS_RANK_CACHE_PIN,      "file", -1)   \
    X(CACHE_REF,      "shm",   FS_RANK_CACHE_REF,      "file", 0600) \
    X(SHIM_COUNTERS,  "shm",   FS_RANK_SHIM_COUNTERS,  "file", 0600) \
    X(SLICE_MAP,      "shm",   FS_RANK_SLICE_MAP,      "file", 0600) \
    X(READY,          "shm",   FS_RANK_READY,          "file", -1)   \
    X(PREFETCHED,     "shm",   FS_RANK_PREFETCHED,     "file", -1)   \
    X(JOB_SECRET,     "shm",   FS_RANK_JOB_SECRET,     "file", 0600) \
    X(TASKS_DIR,      "shm",   FS_RANK_TASKS_DIR,      "dir",  -1)   \
    X(TASK_TMP,       "tasks", FS_RANK_TASK_TMP,       "file", -1)   \
    X(TASK_RUNNING,   "tasks", FS_RANK_TASK_RUNNING,   "file", -1)   \
    X(TASK_DONE,      "tasks", FS_RANK_TASK_DONE,      "file", -1)   \
    X(VOID_DIR,       "shm",   FS_RANK_VOID_DIR,       "dir",  0700) \
    X(PARTS_DIR,      "local", FS_RANK_PARTS_DIR,      "dir",  -1)   \
    X(PARTITION_COPY, "parts", FS_RANK_PARTITION_COPY, "file", -1)   \
    X(FILES_DIR,      "local", FS_RANK_FILES_DIR,      "dir",  -1)   \
    X(LOCAL_CACHE_DIR, "local", FS_RANK_LOCAL_CACHE_DIR, "dir", -1)   \
    X(UPPER_DIR,      "local", FS_RANK_UPPER_DIR,      "dir",  0700) \
    X(OUTPUT_JOURNAL, "shm",   FS_RANK_OUTPUT_JOURNAL, "file", 0600)

#endif
