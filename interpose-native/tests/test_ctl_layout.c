// link: wire_client.c client_locks.c ring_producer.c
// valgrind: yes
/* The structs of wire_layout.h against the golden control files in tests/vectors/ctl (written by the Java
 * ControlFile, see the README there): every field parses to the value the generator wrote; the C ring producer
 * writes the pending request record byte for byte as Agrona did; fs_wire_attach accepts basic.ctl and refuses,
 * with -EPROTO, a file whose version word carries another struct size or the old format number. */
#include "wire_client.h"
#include "ring_producer.h"
#include "wire_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* The generator's values (ControlFileVectors.java). */
#define SLOT_COUNT        3u
#define SLOT_SIZE         256u
#define RING_CAPACITY     64u
#define SERVER_PID        4242
#define HEARTBEAT         123456789000LL
#define GENERATION        0x0102030405060708ull
#define ANSWERED_SUBMIT   123456700000LL
#define ANSWER_NS         123456750000LL
#define PENDING_SUBMIT    123456780000LL
#define IMAGE_SIZE        (8192u + SLOT_COUNT * SLOT_SIZE)

static char vectors[4096];

/* Reads a vector into page-aligned memory, as a mapping would be. Returns NULL (and records a failure) if absent. */
static uint8_t *load(const char *name, size_t *size)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", vectors, name);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL, "%s missing", path);
    if (f == NULL)
        return NULL;
    void *image = NULL;
    if (posix_memalign(&image, 4096, IMAGE_SIZE + 1) != 0) {
        fclose(f);
        return NULL;
    }
    *size = fread(image, 1, IMAGE_SIZE + 1, f);
    fclose(f);
    CHECK(*size == IMAGE_SIZE, "%s: %zu bytes, want %u", name, *size, IMAGE_SIZE);
    return image;
}

static fs_slot_header *slot(uint8_t *image, uint32_t index)
{
    const fs_ctl_header *h = (const fs_ctl_header *)image;
    return (fs_slot_header *)(image + h->slots_offset + (size_t)index * h->slot_size);
}

static void check_request(const fs_slot_header *s, int32_t pid, uint32_t sequence, int32_t flags, uint32_t entry,
                          const char *key)
{
    CHECK(s->owner_pid == pid, "owner %d, want %d", s->owner_pid, pid);
    CHECK(s->claim_word >> 32 == (uint32_t)pid, "claim word's high half is the owner");
    CHECK(s->sequence == sequence, "sequence %u, want %u", s->sequence, sequence);
    CHECK(s->op == FS_OP_OPEN, "op %u", s->op);
    CHECK(s->flags == flags, "flags %#x, want %#x", s->flags, flags);
    CHECK(s->entry_index == entry, "entry %u, want %u", s->entry_index, entry);
    CHECK(s->generation == GENERATION, "generation %#llx", (unsigned long long)s->generation);
    CHECK(s->request_length == strlen(key) + 1, "request length %u for %s", s->request_length, key);
    CHECK(strcmp((const char *)(s + 1), key) == 0, "key %s, want %s", (const char *)(s + 1), key);
}

static void test_structs_parse_basic(void)
{
    size_t size;
    uint8_t *image = load("basic.ctl", &size);
    if (image == NULL)
        return;
    const fs_ctl_header *h = (const fs_ctl_header *)image;
    CHECK(memcmp(h->magic, FS_CTL_MAGIC, 8) == 0, "magic");
    CHECK(h->version == FS_CTL_VERSION, "version %#x, want %#x", h->version, FS_CTL_VERSION);
    CHECK(h->slot_count == SLOT_COUNT && h->slot_size == SLOT_SIZE, "slots %u x %u", h->slot_count, h->slot_size);
    CHECK(h->ring_capacity == RING_CAPACITY, "ring capacity %u", h->ring_capacity);
    CHECK(h->ring_offset == FS_CTL_HEADER_SIZE, "ring offset %llu", (unsigned long long)h->ring_offset);
    CHECK(h->slots_offset == 8192, "slots offset %llu", (unsigned long long)h->slots_offset);
    CHECK(h->server_pid == SERVER_PID, "server pid %d", h->server_pid);
    CHECK(h->server_state == FS_SERVER_RUNNING, "server state %u", h->server_state);
    CHECK(h->heartbeat_ns == HEARTBEAT, "heartbeat %lld", (long long)h->heartbeat_ns);
    CHECK(h->doorbell == 2, "doorbell %u: one ring per record", h->doorbell);
    for (size_t i = sizeof *h; i < FS_CTL_HEADER_SIZE; i++)
        CHECK(image[i] == 0, "header page byte %zu is %u, want 0", i, image[i]);

    /* Ring: record 1 (slot 0) consumed, which zeroes it; record 2 (slot 1) waits at index 16. */
    const uint8_t *ring = image + h->ring_offset;
    const fs_ring_trailer *t = (const fs_ring_trailer *)(ring + h->ring_capacity);
    CHECK(t->head == 16 && t->tail == 32 && t->head_cache == 0, "head %lld tail %lld head cache %lld",
          (long long)t->head, (long long)t->tail, (long long)t->head_cache);
    const fs_ring_record *consumed = (const fs_ring_record *)ring;
    CHECK(consumed->length == 0 && consumed->type == 0, "a consumed record is zeroed");
    const fs_ring_record *pending = (const fs_ring_record *)(ring + 16);
    CHECK(pending->length == (int32_t)(sizeof(fs_ring_record) + sizeof(fs_ring_request)), "record length %d",
          pending->length);
    CHECK(pending->type == FS_RING_MSG_OPEN_REQUEST, "record type %d", pending->type);
    const fs_ring_request *request = (const fs_ring_request *)(pending + 1);
    CHECK(request->slot == 1 && request->sequence == 7, "record names slot %u sequence %u", request->slot,
          request->sequence);

    /* Slot 0: answered. */
    const fs_slot_header *answered = slot(image, 0);
    CHECK(answered->state == FS_SLOT_DONE, "slot 0 state %u", answered->state);
    check_request(answered, 5001, 3, 0x80000, 12, "dataset/train/b.jpg");
    CHECK(answered->result == 0, "slot 0 result %d", answered->result);
    const char *path = (const char *)answered + fs_slot_response_offset(SLOT_SIZE);
    CHECK(answered->submit_ns == ANSWERED_SUBMIT && answered->answer_ns == ANSWER_NS, "slot 0 stamps %lld %lld",
          (long long)answered->submit_ns, (long long)answered->answer_ns);
    CHECK(fs_slot_response_offset(SLOT_SIZE) == 160, "response offset %u", fs_slot_response_offset(SLOT_SIZE));
    CHECK(answered->response_length == strlen("/var/tmp/fanstore-cache/b.jpg") &&
          strcmp(path, "/var/tmp/fanstore-cache/b.jpg") == 0, "response %s (%u)", path, answered->response_length);

    /* Slot 1: submitted, its record in the ring. */
    const fs_slot_header *submitted = slot(image, 1);
    CHECK(submitted->state == FS_SLOT_SUBMITTED, "slot 1 state %u", submitted->state);
    CHECK(submitted->submit_ns == PENDING_SUBMIT && submitted->answer_ns == 0, "slot 1 stamps %lld %lld",
          (long long)submitted->submit_ns, (long long)submitted->answer_ns);
    check_request(submitted, 5002, 7, 0, FS_ENTRY_NONE, "dataset/a.jpg");
    CHECK(submitted->result == 0 && submitted->response_length == 0, "slot 1 has no answer yet");

    const fs_slot_header *never = slot(image, 2);
    CHECK(never->claim_word == 0 && never->sequence == 0, "slot 2 never claimed");
    free(image);
}

/* Rewinds the ring to before the pending record and lets ring_producer write it again: the bytes must be Agrona's. */
static void test_producer_writes_agronas_bytes(void)
{
    size_t size;
    uint8_t *golden = load("basic.ctl", &size);
    uint8_t *image = load("basic.ctl", &size);
    if (golden == NULL || image == NULL) {
        free(golden);
        free(image);
        return;
    }
    uint8_t *ring = image + FS_CTL_HEADER_SIZE;
    fs_ring_trailer *t = (fs_ring_trailer *)(ring + RING_CAPACITY);
    memset(ring + 16, 0, 16);
    t->tail = 16;
    fs_ring r;
    CHECK(fs_ring_init(&r, ring, RING_CAPACITY) == 0, "ring init");
    const fs_ring_request request = { .slot = 1, .sequence = 7 };
    CHECK(fs_ring_write(&r, FS_RING_MSG_OPEN_REQUEST, &request, sizeof request) == 0, "ring write");
    CHECK(memcmp(image, golden, IMAGE_SIZE) == 0, "ring bytes differ from what Agrona wrote");
    free(golden);
    free(image);
}

/* Writes bytes to a private file of ours (attach trusts only those) and attaches to it. */
static int attach_image(const uint8_t *image, size_t size)
{
    char path[] = "/tmp/fanstore-ctl-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return -errno;
    CHECK(write(fd, image, size) == (ssize_t)size, "write");
    close(fd);
    char clients[sizeof path + 8];  /* the runtime creates <ctl>.clients before ctl (format 3) */
    snprintf(clients, sizeof clients, "%s.clients", path);
    fd = open(clients, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
    CHECK(fd >= 0, "create %s", clients);
    close(fd);
    fs_wire *w = NULL;
    int rc = fs_wire_attach(&w, path);
    if (rc == 0)
        fs_wire_detach(w);
    unlink(path);
    unlink(clients);
    return rc;
}

static void test_attach_checks_the_version_word(void)
{
    size_t size;
    uint8_t *image = load("basic.ctl", &size);
    if (image == NULL)
        return;
    CHECK(attach_image(image, size) == 0, "basic.ctl attaches");
    fs_ctl_header *h = (fs_ctl_header *)image;
    const uint32_t good = h->version;
    h->version = (FS_CTL_FORMAT << 24) | (8u << 16) | (64u << 8) | 72u;  /* a build whose header grew */
    CHECK(attach_image(image, size) == -EPROTO, "other header size must be refused");
    h->version = 1;  /* the word before struct sizes were folded in */
    CHECK(attach_image(image, size) == -EPROTO, "bare format number must be refused");
    h->version = good + (1u << 24);
    CHECK(attach_image(image, size) == -EPROTO, "other format must be refused");
    free(image);

    uint8_t *other = load("slot-header-128.ctl", &size);
    if (other == NULL)
        return;
    const fs_ctl_header *oh = (const fs_ctl_header *)other;
    CHECK(((oh->version >> 8) & 0xffu) == 128u && oh->version != FS_CTL_VERSION, "vector carries a 128-byte slot");
    CHECK(attach_image(other, size) == -EPROTO, "slot-header-128.ctl must be refused");
    free(other);
}

int main(void)
{
    const char *repo = getenv("FANSTORE_REPO");
    snprintf(vectors, sizeof vectors, "%s/tests/vectors/ctl", repo ? repo : "..");
    test_structs_parse_basic();
    test_producer_writes_agronas_bytes();
    test_attach_checks_the_version_word();
    if (failures)
        fprintf(stderr, "test_ctl_layout: %d failures\n", failures);
    return failures ? 1 : 0;
}
