/* e2e_threads: run under the shim by e2e_local.sh. Threads open/fstat/close files, list directories and
 * stat relative to directory descriptors concurrently; every answer must agree with stat(path).
 * Usage: e2e_threads <dir> <file relative to dir> <subdir relative to dir>. Exits non-zero on a mismatch. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *dir, *file, *sub;
static struct stat want_file, want_sub;
static long want_entries;

static long count_entries(const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    long n = 0;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

static void *worker(void *arg)
{
    (void)arg;
    char path[4096], subpath[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    snprintf(subpath, sizeof subpath, "%s/%s", dir, sub);
    long bad = 0;
    for (int i = 0; i < 3000; i++) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || st.st_ino != want_file.st_ino || st.st_size != want_file.st_size)
            bad++;
        int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (copy < 0 || fstat(copy, &st) != 0 || st.st_ino != want_file.st_ino)
            bad++;
        close(copy);
        close(fd);
        if (count_entries(subpath) != want_entries)
            bad++;
        int dfd = open(dir, O_RDONLY | O_DIRECTORY);
        if (dfd < 0 || fstatat(dfd, sub, &st, 0) != 0 || st.st_ino != want_sub.st_ino)
            bad++;
        close(dfd);
    }
    return (void *)bad;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    dir = argv[1], file = argv[2], sub = argv[3];
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (stat(path, &want_file) != 0)
        return perror(path), 1;
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    if (stat(path, &want_sub) != 0 || (want_entries = count_entries(path)) < 2)
        return perror(path), 1;
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    long bad = 0;
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += (long)r;
    }
    /* Nothing may leak: every descriptor above was closed. */
    int fd = open("/dev/null", O_RDONLY);
    printf("%ld mismatches, next fd %d\n", bad, fd);
    return bad != 0 || fd > 10;
}
