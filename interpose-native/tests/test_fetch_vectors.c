// valgrind: yes
/* An independent reader of the remote-fetch wire format, written from its spec ("Remote fetch: wire format" in
 * runtime/src/main/java/org/fanstore/runtime/fetch/README.md), on the golden files tests/vectors/fetch/ (written by the
 * runtime's FetchProtocol, reproduced by FetchProtocolVectorsTest): every field of the four requests and the four
 * reply headers has its documented value, decoded big-endian by hand; requests are 48 + 32 bytes, headers 24. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

/* The spec's numbers, written out here rather than taken from any header of the project. */
enum {
    SECRET_BYTES = 32,
    REQUEST_BYTES = 48 + SECRET_BYTES,
    REPLY_HEADER_BYTES = 24,
    LAYOUT_VERSION = 3,
    KIND_FETCH = 1, KIND_SHUTDOWN = 2, KIND_FETCH_WHOLE = 3, KIND_FETCH_FOR_READER = 4,
    STATUS_OK = 0, STATUS_NOT_HELD = 1, STATUS_READ_FAILED = 2, STATUS_BAD_RANGE = 3, STATUS_BAD_REQUEST = 4,
    STATUS_UNAUTHORIZED = 5,
};
#define REPLY_TAG_FIRST (1 << 24)
#define REPLY_TAG_LIMIT (1 << 30)
#define MAX_CHUNK_BYTES (8 << 20)

/* The golden values (tests/vectors/fetch/README.md). */
#define V_REQUESTER 3
#define V_REPLY_TAG 0x01000005
#define V_CHUNK_BYTES 520192
#define V_ID 0x0102030405060708ull
#define V_POSITION 0x0000001122334455ll
#define V_LENGTH 0x0000000000A0B0C0ll

static int32_t be32(const unsigned char *p)
{
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3]);
}

static int64_t be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return (int64_t)v;
}

struct request {
    int32_t kind, requester, reply_tag, chunk_bytes;
    int64_t id, position, length;
    int32_t version, padding;
    unsigned char secret[SECRET_BYTES];
};

static void decode_request(const unsigned char *b, struct request *r)
{
    r->kind = be32(b + 0);
    r->requester = be32(b + 4);
    r->reply_tag = be32(b + 8);
    r->chunk_bytes = be32(b + 12);
    r->id = be64(b + 16);
    r->position = be64(b + 24);
    r->length = be64(b + 32);
    r->version = be32(b + 40);
    r->padding = be32(b + 44);
    memcpy(r->secret, b + 48, SECRET_BYTES);
}

struct header {
    int32_t status, zero;
    int64_t object_length, reply_length;
};

static void decode_header(const unsigned char *b, struct header *h)
{
    h->status = be32(b + 0);
    h->zero = be32(b + 4);
    h->object_length = be64(b + 8);
    h->reply_length = be64(b + 16);
}

/* Reads tests/vectors/fetch/<name> whole; returns its size, or -1 (reported) when it cannot be read. */
static long load(const char *name, unsigned char *buf, size_t cap)
{
    const char *repo = getenv("FANSTORE_REPO");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/vectors/fetch/%s", repo ? repo : "..", name);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        CHECK(0, "cannot open %s", path);
        return -1;
    }
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return (long)n;
}

static int secret_is_the_test_secret(const unsigned char *s)
{
    for (int i = 0; i < SECRET_BYTES; i++)
        if (s[i] != 0xA0 + i)
            return 0;
    return 1;
}

/* Reads a request file and checks the fields every request shares: size, version, padding, secret. */
static int load_request(const char *name, struct request *r)
{
    unsigned char buf[REQUEST_BYTES + 1];
    long n = load(name, buf, sizeof buf);
    if (n < 0)
        return 0;
    CHECK(n == REQUEST_BYTES, "%s: %ld bytes, not %d", name, n, REQUEST_BYTES);
    if (n != REQUEST_BYTES)
        return 0;
    decode_request(buf, r);
    CHECK(r->version == LAYOUT_VERSION, "%s: version %d", name, r->version);
    CHECK(r->padding == 0, "%s: padding %d", name, r->padding);
    CHECK(secret_is_the_test_secret(r->secret), "%s: not the test secret", name);
    return 1;
}

static void check_fetch(const char *name, int32_t kind)
{
    struct request r;
    if (!load_request(name, &r))
        return;
    CHECK(r.kind == kind, "%s: kind %d, not %d", name, r.kind, kind);
    CHECK(r.requester == V_REQUESTER, "%s: requester %d", name, r.requester);
    CHECK(r.reply_tag == V_REPLY_TAG, "%s: reply tag %d", name, r.reply_tag);
    CHECK(r.reply_tag >= REPLY_TAG_FIRST && r.reply_tag < REPLY_TAG_LIMIT, "%s: reply tag outside the range", name);
    CHECK(r.chunk_bytes == V_CHUNK_BYTES, "%s: chunk bytes %d", name, r.chunk_bytes);
    CHECK(r.chunk_bytes >= 1 && r.chunk_bytes <= MAX_CHUNK_BYTES, "%s: chunk bytes outside 1..8 MiB", name);
    CHECK((uint64_t)r.id == V_ID, "%s: id %llx", name, (unsigned long long)r.id);
    CHECK(r.position == V_POSITION, "%s: position %lld", name, (long long)r.position);
    CHECK(r.length == V_LENGTH, "%s: length %lld", name, (long long)r.length);
}

static void check_shutdown(void)
{
    struct request r;
    if (!load_request("request-shutdown.bin", &r))
        return;
    CHECK(r.kind == KIND_SHUTDOWN, "shutdown: kind %d", r.kind);
    CHECK(r.requester == V_REQUESTER, "shutdown: requester %d", r.requester);
    CHECK(r.reply_tag == 0 && r.chunk_bytes == 0 && r.id == 0 && r.position == 0 && r.length == 0,
          "shutdown: a field other than kind, requester, version and secret is not zero");
}

static void check_header(const char *name, int32_t status, int64_t object_length, int64_t reply_length)
{
    unsigned char buf[REPLY_HEADER_BYTES + 1];
    long n = load(name, buf, sizeof buf);
    if (n < 0)
        return;
    CHECK(n == REPLY_HEADER_BYTES, "%s: %ld bytes, not %d", name, n, REPLY_HEADER_BYTES);
    if (n != REPLY_HEADER_BYTES)
        return;
    struct header h;
    decode_header(buf, &h);
    CHECK(h.status == status, "%s: status %d, not %d", name, h.status, status);
    CHECK(h.zero == 0, "%s: bytes 4..7 are %d", name, h.zero);
    CHECK(h.object_length == object_length, "%s: object length %lld", name, (long long)h.object_length);
    CHECK(h.reply_length == reply_length, "%s: reply length %lld", name, (long long)h.reply_length);
    CHECK(status == STATUS_OK || h.reply_length == 0, "%s: an error header announces data", name);
}

int main(void)
{
    /* the decoder itself: most significant byte first, signs kept */
    const unsigned char probe[8] = { 0xFF, 0xFF, 0xFF, 0xFE, 0x01, 0x02, 0x03, 0x04 };
    CHECK(be32(probe) == -2 && be32(probe + 4) == 0x01020304, "be32");
    CHECK(be64(probe) == (int64_t)0xFFFFFFFE01020304ull, "be64");

    check_fetch("request-fetch.bin", KIND_FETCH);
    check_fetch("request-fetch-whole.bin", KIND_FETCH_WHOLE);
    check_fetch("request-fetch-for-reader.bin", KIND_FETCH_FOR_READER);
    check_shutdown();

    check_header("reply-header-ok.bin", STATUS_OK, 0x0000000123456789ll, V_LENGTH);
    check_header("reply-header-not-held.bin", STATUS_NOT_HELD, -1, 0);
    check_header("reply-header-bad-range.bin", STATUS_BAD_RANGE, 0x0000000000ABCDEFll, 0);
    check_header("reply-header-unauthorized.bin", STATUS_UNAUTHORIZED, -1, 0);
    /* NOT_HELD with the object's length: the owner fills that partition, the range has not landed yet */
    check_header("reply-header-not-held-filling.bin", STATUS_NOT_HELD, 0x0000000007F0F000ll, 0);

    if (failures == 0)
        printf("fetch vectors: 4 requests and 5 reply headers read as specified\n");
    return failures == 0 ? 0 : 1;
}
