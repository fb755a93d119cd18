// link: fd_table.c
// valgrind: yes
/* fd_table: set/get/clear, copy (dup semantics), ranges (close_range), limits, and concurrent readers and
 * writers on distinct descriptors (each thread must always read back exactly what it wrote). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "fd_table.h"

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
    printf(__VA_ARGS__); printf("\n"); } } while (0)

static void *worker(void *arg)
{
    int base = (int)(long)arg;
    long bad = 0;
    for (int round = 0; round < 2000; round++) {
        for (int i = 0; i < 64; i++) {
            int fd = base + i * 8;
            fs_fd_set(fd, FS_FD_FILE, (uint32_t)(round * 64 + i), (uint64_t)fd, (uint64_t)round);
        }
        for (int i = 0; i < 64; i++) {
            int fd = base + i * 8;
            fs_fd_info info;
            if (fs_fd_get(fd, &info) != FS_FD_FILE || info.index != (uint32_t)(round * 64 + i) ||
                info.dev != (uint64_t)fd || info.ino != (uint64_t)round)
                bad++;
            fs_fd_clear(fd);
            if (fs_fd_get(fd, &info) != FS_FD_NONE)
                bad++;
        }
    }
    return (void *)bad;
}

int main(void)
{
    fs_fd_info info;
    CHECK(fs_fd_get(3, &info) == FS_FD_NONE, "empty table reports fd 3");
    CHECK(fs_fd_get(-1, &info) == FS_FD_NONE, "negative fd");

    CHECK(fs_fd_set(3, FS_FD_FILE, 7, 11, 13) == 0, "set 3");
    CHECK(fs_fd_get(3, &info) == FS_FD_FILE && info.index == 7 && info.dev == 11 && info.ino == 13,
          "get 3: kind/index/dev/ino");
    CHECK(fs_fd_get(4, &info) == FS_FD_NONE, "neighbour 4 untouched");

    CHECK(fs_fd_set(5, FS_FD_DIR, 0, 1, 2) == 0, "set dir 5 (the root entry, index 0)");
    CHECK(fs_fd_get(5, &info) == FS_FD_DIR && info.index == 0, "dir with index 0 is still ours");

    fs_fd_copy(3, 9);          /* dup(3) -> 9 */
    CHECK(fs_fd_get(9, &info) == FS_FD_FILE && info.index == 7 && info.ino == 13, "copy 3 -> 9");
    fs_fd_copy(4, 9);          /* dup2(4, 9): 4 is not ours, 9 must be forgotten */
    CHECK(fs_fd_get(9, &info) == FS_FD_NONE, "copy of a foreign fd clears the target");

    fs_fd_clear(3);
    CHECK(fs_fd_get(3, &info) == FS_FD_NONE, "clear 3");
    fs_fd_clear(3);            /* twice is harmless */
    fs_fd_clear(100000);       /* never-mapped chunk */

    /* Far descriptors (another chunk) and close_range. */
    CHECK(fs_fd_set(5000, FS_FD_FILE, 1, 1, 1) == 0, "set 5000");
    CHECK(fs_fd_set(70000, FS_FD_FILE, 2, 2, 2) == 0, "set 70000");
    fs_fd_clear_range(6, ~0u, NULL);
    CHECK(fs_fd_get(5000, &info) == FS_FD_NONE && fs_fd_get(70000, &info) == FS_FD_NONE, "range cleared");
    CHECK(fs_fd_get(5, &info) == FS_FD_DIR, "below the range kept");
    fs_fd_clear_range(0, 5, NULL);
    CHECK(fs_fd_get(5, &info) == FS_FD_NONE, "range 0..5 cleared");

    CHECK(fs_fd_set((int)FS_FD_MAX, FS_FD_FILE, 1, 1, 1) == -EMFILE, "beyond FS_FD_MAX is EMFILE");
    CHECK(fs_fd_set((int)FS_FD_MAX - 1, FS_FD_FILE, 1, 1, 1) == 0, "last trackable fd");
    CHECK(fs_fd_get((int)FS_FD_MAX - 1, &info) == FS_FD_FILE, "last trackable fd reads back");

    /* Threads on interleaved descriptors sharing chunks. */
    pthread_t t[8];
    for (long i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, worker, (void *)(10 + i));
    long bad = 0;
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += (long)r;
    }
    CHECK(bad == 0, "%ld inconsistent reads under concurrency", bad);

    if (failures)
        printf("test_fd_table: %d failure(s)\n", failures);
    return failures != 0;
}
