// link: wire_client.c ring_producer.c
// valgrind: no
/* A runtime whose heartbeat is stale (its dispatcher starved of CPU) but whose process is alive is slow, not dead:
 * a request waits for it and gets its answer. A stopped (SIGSTOP) or dead runtime still fails a request at once
 * with EIO. The "runtime" is a child process named as server_pid in a copy of the golden basic.ctl; this test
 * plays its dispatcher by writing the answer into the slot itself. */
#include "wire_client.h"
#include "wire_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
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

    const pid_t runtime = fork();
    if (runtime == 0) {
        for (;;)
            pause();
    }
    fs_ctl_header *h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(h != MAP_FAILED, "mmap");
    h->server_pid = runtime;
    atomic_store(&h->server_state, FS_SERVER_RUNNING);
    atomic_store(&h->heartbeat_ns, now_ns() - 10 * FS_HEARTBEAT_STALE_NS);  /* starved for 30 s */

    fs_wire *w = NULL;
    CHECK(fs_wire_attach(&w, ctl) == 0, "attach %s", ctl);

    /* 1. alive but starved: the request waits (no EIO after 1.5 s) and gets the answer when it comes */
    call slow = { .wire = w };
    pthread_t t;
    pthread_create(&t, NULL, do_open, &slow);
    usleep(1500 * 1000);
    CHECK(!atomic_load(&slow.done), "a live runtime with a stale heartbeat failed the request: rc=%d", slow.rc);
    int answered = 0;
    for (int i = 0; i < 100 && !(answered = answer_one(h, "/tmp/answer/slow")); i++)
        usleep(10 * 1000);
    CHECK(answered, "no submitted slot to answer");
    pthread_join(t, NULL);
    CHECK(slow.rc == 0 && strcmp(slow.out, "/tmp/answer/slow") == 0, "slow answer: rc=%d out=%s", slow.rc,
          slow.rc == 0 ? slow.out : "");
    CHECK(slow.took_ns >= 1400000000LL, "answered after %lld ns", (long long)slow.took_ns);

    /* 2. stopped: EIO at once */
    kill(runtime, SIGSTOP);
    int st;
    waitpid(runtime, &st, WUNTRACED);
    call stopped = { .wire = w };
    do_open(&stopped);
    CHECK(stopped.rc == -EIO, "stopped runtime: rc=%d", stopped.rc);
    CHECK(stopped.took_ns < 500000000LL, "stopped runtime: EIO after %lld ns", (long long)stopped.took_ns);

    /* 3. dead: EIO at once */
    kill(runtime, SIGKILL);
    waitpid(runtime, &st, 0);
    call dead = { .wire = w };
    do_open(&dead);
    CHECK(dead.rc == -EIO, "dead runtime: rc=%d", dead.rc);
    CHECK(dead.took_ns < 500000000LL, "dead runtime: EIO after %lld ns", (long long)dead.took_ns);

    fs_wire_detach(w);
    munmap(h, size);
    close(fd);
    unlink(ctl);
    if (failures == 0)
        printf("slow server: waited %.2f s for a live starved runtime; stopped and dead ones fail at once\n",
               slow.took_ns / 1e9);
    return failures == 0 ? 0 : 1;
}
