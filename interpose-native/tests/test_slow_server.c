// link: wire_client.c client_locks.c ring_producer.c
// valgrind: no
/* Liveness (shm README, "Liveness"): a runtime whose heartbeat is stale but who still holds <ctl>.lock is slow, not
 * dead: a request waits for it and gets its answer, also when it is stopped (SIGSTOP) and when its pid names nothing
 * here (another PID namespace). A runtime whose lock is free is dead: EIO at once, even when its recorded pid
 * belongs to a live unrelated process (pid reuse). No lock file: the /proc fallback. The "runtime" is a child
 * holding the lock; this test plays its dispatcher by writing the answer into the slot itself. */
#include "wire_client.h"
#include "wire_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

typedef struct call {
    fs_wire *wire;
    char out[256];
    int rc;
    _Atomic int done;
    int64_t took_ns;
} call;

static void *do_open(void *arg)
{
    call *c = arg;
    const int64_t t0 = now_ns();
    c->rc = fs_wire_open(c->wire, "slow/key", 8, 0, 1, O_RDONLY, c->out, sizeof c->out);
    c->took_ns = now_ns() - t0;
    atomic_store(&c->done, 1);
    return NULL;
}

/* Answers the first SUBMITTED slot owned by this process with `answer`, as the runtime's dispatcher would. */
static int answer_one(fs_ctl_header *h, const char *answer)
{
    for (uint32_t i = 0; i < h->slot_count; i++) {
        fs_slot_header *s = (fs_slot_header *)((uint8_t *)h + h->slots_offset + (size_t)i * h->slot_size);
        if (atomic_load(&s->state) != FS_SLOT_SUBMITTED || s->owner_pid != getpid())
            continue;
        const size_t len = strlen(answer);
        memcpy((uint8_t *)s + fs_slot_response_offset(h->slot_size), answer, len);
        s->response_length = (uint32_t)len;
        s->result = 0;
        atomic_store(&s->state, FS_SLOT_DONE);
        syscall(SYS_futex, (uint32_t *)&s->state, FUTEX_WAKE, 1, NULL, NULL, 0);
        return 1;
    }
    return 0;
}

/* Starts an open in a thread, checks it still waits after 1.5 s, answers it and checks it got the answer. */
static void waits_then_answered(fs_wire *w, fs_ctl_header *h, call *c, const char *answer, const char *what)
{
    (void)w;
    pthread_t t;
    pthread_create(&t, NULL, do_open, c);
    usleep(1500 * 1000);
    CHECK(!atomic_load(&c->done), "%s: a live runtime with a stale heartbeat failed the request: rc=%d", what, c->rc);
    int answered = 0;
    for (int i = 0; i < 100 && !(answered = answer_one(h, answer)); i++)
        usleep(10 * 1000);
    CHECK(answered, "%s: no submitted slot to answer", what);
    pthread_join(t, NULL);
    CHECK(c->rc == 0 && strcmp(c->out, answer) == 0, "%s: rc=%d out=%s", what, c->rc, c->rc == 0 ? c->out : "");
    CHECK(c->took_ns >= 1400000000LL, "%s: answered after %lld ns", what, (long long)c->took_ns);
}

int main(void)
{
    const char *repo = getenv("FANSTORE_REPO");
    char golden[4096], ctl[] = "/tmp/fs-slow-server-XXXXXX";
    snprintf(golden, sizeof golden, "%s/tests/vectors/ctl/basic.ctl", repo ? repo : "..");
    FILE *in = fopen(golden, "rb");
    CHECK(in != NULL, "%s missing", golden);
    if (in == NULL)
        return 1;
    static uint8_t image[1 << 16];
    const size_t size = fread(image, 1, sizeof image, in);
    fclose(in);
    const int fd = mkstemp(ctl);
    CHECK(fd >= 0 && write(fd, image, size) == (ssize_t)size, "cannot write %s", ctl);

    char lock[sizeof ctl + 8], clients[sizeof ctl + 8];
    snprintf(lock, sizeof lock, "%s.lock", ctl);
    snprintf(clients, sizeof clients, "%s.clients", ctl);
    const int cfd = open(clients, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);  /* as the runtime does (format 3) */
    CHECK(cfd >= 0, "create %s", clients);
    close(cfd);
    int ready[2];
    CHECK(pipe(ready) == 0, "pipe");
    pid_t runtime = fork();
    if (runtime == 0) {  /* holds the lock as the runtime does, then waits to be stopped or killed */
        const int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
        if (lfd < 0 || fcntl(lfd, F_SETLK, &l) != 0)
            _exit(1);
        if (write(ready[1], "x", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    char c;
    CHECK(read(ready[0], &c, 1) == 1, "the lock holder did not start");
    fs_ctl_header *h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(h != MAP_FAILED, "mmap");
    h->server_pid = runtime;
    atomic_store(&h->server_state, FS_SERVER_RUNNING);
    atomic_store(&h->heartbeat_ns, now_ns() - 10 * FS_HEARTBEAT_STALE_NS);  /* starved for 30 s */

    fs_wire *w = NULL;
    CHECK(fs_wire_attach(&w, ctl) == 0, "attach %s", ctl);

    /* 1. alive but starved: the request waits (no EIO after 1.5 s) and gets the answer when it comes */
    call slow = { .wire = w };
    waits_then_answered(w, h, &slow, "/tmp/answer/slow", "starved");

    /* 2. stopped (SIGSTOP) with its lock: slow, waited for, answered after SIGCONT */
    kill(runtime, SIGSTOP);
    int st;
    waitpid(runtime, &st, WUNTRACED);
    call stopped = { .wire = w };
    pthread_t t;
    pthread_create(&t, NULL, do_open, &stopped);
    usleep(1500 * 1000);
    CHECK(!atomic_load(&stopped.done), "a stopped runtime holding its lock failed the request: rc=%d", stopped.rc);
    kill(runtime, SIGCONT);
    int answered = 0;
    for (int i = 0; i < 100 && !(answered = answer_one(h, "/tmp/answer/stopped")); i++)
        usleep(10 * 1000);
    CHECK(answered, "no submitted slot to answer");
    pthread_join(t, NULL);
    CHECK(stopped.rc == 0, "stopped then continued: rc=%d", stopped.rc);

    /* 3. its pid names nothing here (another PID namespace), lock held: still slow, not dead */
    h->server_pid = 0x3ffffff0;
    call hidden = { .wire = w };
    waits_then_answered(w, h, &hidden, "/tmp/answer/hidden", "invisible pid");

    /* 4. dead (lock freed by the kernel) while its pid belongs to a live unrelated process (reuse): EIO at once */
    kill(runtime, SIGKILL);
    waitpid(runtime, &st, 0);
    h->server_pid = getppid();
    call dead = { .wire = w };
    do_open(&dead);
    CHECK(dead.rc == -EIO, "dead runtime, reused pid: rc=%d", dead.rc);
    CHECK(dead.took_ns < 500000000LL, "dead runtime: EIO after %lld ns", (long long)dead.took_ns);

    /* 5. no lock file (an older server): the /proc fallback, a dead pid is dead */
    unlink(lock);
    h->server_pid = runtime;
    call old = { .wire = w };
    do_open(&old);
    CHECK(old.rc == -EIO, "no lock file, dead pid: rc=%d", old.rc);

    fs_wire_detach(w);
    munmap(h, size);
    close(fd);
    unlink(ctl);
    unlink(clients);
    unlink(lock);
    if (failures == 0)
        printf("slow server: waited %.2f s for a starved, a stopped and an invisible-pid runtime holding its lock;"
               " a dead one fails at once even with its pid reused\n", slow.took_ns / 1e9);
    return failures == 0 ? 0 : 1;
}
