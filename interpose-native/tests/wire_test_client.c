/* wire_test_client: drives fs_wire_open against a test server (runtime's ShmEchoHandler conventions:
 * key K is answered with "/tmp/answer/" K; keys starting "missing" with ENOENT; "hang" keys are held).
 *   wire_test_client check  <ctl> <threads> <requests-per-thread> <key-prefix>   every answer must be right
 *   wire_test_client expect <ctl> <key> <errno>     one request; 0 = the echo answer, else that errno
 *   wire_test_client hang   <ctl> <key>             one request the server holds; the test kills us
 *   wire_test_client forkhang <ctl> <key>           one request, fork; the child prints "child <pid>" and sends
 *                                                   a held request, the parent sleeps (the test kills both)
 *   wire_test_client native <file> <threads> <requests-per-thread>   open()+close() of a real file
 * check/native print one line: requests ok bad rps p50_ns p99_ns max_ns. Exit 0 iff everything matched. */
#include "../src/wire_client.h"
#include "../src/wire_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ANSWER_PREFIX "/tmp/answer/"
#define KEY_CAP 256
#define MAX_THREADS 64

typedef struct worker {
    fs_wire *wire;
    const char *target;  /* key prefix (check) or file path (native) */
    int thread;
    long requests;
    long ok;
    int64_t *latency_ns;
} worker;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *check_worker(void *arg)
{
    worker *wk = arg;
    char key[KEY_CAP], expected[KEY_CAP + sizeof ANSWER_PREFIX], out[PATH_MAX];
    for (long i = 0; i < wk->requests; i++) {
        const int len = snprintf(key, sizeof key, "%s-%d-%ld", wk->target, wk->thread, i);
        snprintf(expected, sizeof expected, ANSWER_PREFIX "%s", key);
        const int64_t t0 = now_ns();
        const int rc = fs_wire_open(wk->wire, key, (size_t)len, (uint32_t)i, 1, O_RDONLY, out, sizeof out);
        wk->latency_ns[i] = now_ns() - t0;
        if (rc == 0 && strcmp(out, expected) == 0)
            wk->ok++;
        else if (wk->requests - wk->ok <= 3)
            fprintf(stderr, "bad answer for %s: rc=%d out=%s\n", key, rc, rc == 0 ? out : "");
    }
    return NULL;
}

static void *native_worker(void *arg)
{
    worker *wk = arg;
    for (long i = 0; i < wk->requests; i++) {
        const int64_t t0 = now_ns();
        const int fd = open(wk->target, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            close(fd);
            wk->ok++;
        }
        wk->latency_ns[i] = now_ns() - t0;
    }
    return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int run_threads(void *(*fn)(void *), fs_wire *wire, const char *target, int threads, long requests)
{
    if (threads < 1 || threads > MAX_THREADS || requests < 1)
        return 2;
    worker wk[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    int64_t *all = calloc((size_t)threads * (size_t)requests, sizeof *all);
    if (all == NULL)
        return 2;
    const int64_t t0 = now_ns();
    for (int t = 0; t < threads; t++) {
        wk[t] = (worker){ wire, target, t, requests, 0, all + (size_t)t * (size_t)requests };
        pthread_create(&tid[t], NULL, fn, &wk[t]);
    }
    long ok = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        ok += wk[t].ok;
    }
    const double seconds = (double)(now_ns() - t0) / 1e9;
    const long total = (long)threads * requests;
    qsort(all, (size_t)total, sizeof *all, cmp_i64);
    printf("requests=%ld ok=%ld bad=%ld rps=%.0f p50_ns=%lld p99_ns=%lld max_ns=%lld\n", total, ok, total - ok,
           (double)total / seconds, (long long)all[total / 2], (long long)all[total * 99 / 100],
           (long long)all[total - 1]);
    free(all);
    return ok == total ? 0 : 1;
}

static int attach_or_report(fs_wire **w, const char *ctl)
{
    const int rc = fs_wire_attach(w, ctl);
    if (rc != 0)
        fprintf(stderr, "attach %s: %s\n", ctl, strerror(-rc));
    return rc;
}

int main(int argc, char **argv)
{
    fs_wire *w = NULL;
    char out[PATH_MAX], expected[PATH_MAX];
    if (argc == 6 && strcmp(argv[1], "check") == 0) {
        if (attach_or_report(&w, argv[2]) != 0)
            return 2;
        return run_threads(check_worker, w, argv[5], atoi(argv[3]), atol(argv[4]));
    }
    if (argc == 5 && strcmp(argv[1], "native") == 0)
        return run_threads(native_worker, NULL, argv[2], atoi(argv[3]), atol(argv[4]));
    if (argc == 5 && strcmp(argv[1], "expect") == 0) {
        if (attach_or_report(&w, argv[2]) != 0)
            return 2;
        const int want = atoi(argv[4]);
        const int64_t t0 = now_ns();
        const int rc = fs_wire_open(w, argv[3], strlen(argv[3]), FS_ENTRY_NONE, 1, O_RDONLY, out, sizeof out);
        snprintf(expected, sizeof expected, ANSWER_PREFIX "%s", argv[3]);
        printf("rc=%d elapsed_ms=%lld\n", rc, (long long)((now_ns() - t0) / 1000000));
        return rc == -want && (want != 0 || strcmp(out, expected) == 0) ? 0 : 1;
    }
    if (argc == 4 && strcmp(argv[1], "hang") == 0) {
        if (attach_or_report(&w, argv[2]) != 0)
            return 2;
        printf("submitting\n");
        fflush(stdout);
        const int rc = fs_wire_open(w, argv[3], strlen(argv[3]), FS_ENTRY_NONE, 1, O_RDONLY, out, sizeof out);
        printf("returned rc=%d\n", rc);  /* the test meant to kill us first */
        return 3;
    }
    if (argc == 4 && strcmp(argv[1], "forkhang") == 0) {
        if (attach_or_report(&w, argv[2]) != 0)
            return 2;
        /* A request before the fork, so the pid cache is filled in the parent and must be refreshed. */
        if (fs_wire_open(w, "prefork", 7, FS_ENTRY_NONE, 1, O_RDONLY, out, sizeof out) != 0)
            return 1;
        fflush(stdout);
        const pid_t child = fork();
        if (child == 0) {
            printf("child %d\n", (int)getpid());
            fflush(stdout);
            fs_wire_open(w, argv[3], strlen(argv[3]), FS_ENTRY_NONE, 1, O_RDONLY, out, sizeof out);
            _exit(3);
        }
        sleep(60);  /* never reaps the child: it stays a zombie once killed */
        kill(child, SIGKILL);
        return child > 0 ? 0 : 1;
    }
    fprintf(stderr, "usage: see the comment at the top of wire_test_client.c\n");
    return 2;
}
