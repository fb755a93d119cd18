/* table3_convert <format-2 table> <out>: rewrites a format-2 metadata table (a dataset's namespace.tbl or a landed
 * meta.tbl) as a landed format-3 table (rank 0 of 1, generation 1) with tests/meta3_build.h, so bench_meta_table can
 * time both formats on the very same namespace (the 1.3M and 14.2M tables of bench/load-bench.sh) before or without
 * the Java writer. Not the product's upgrade path (that is `fanstore upgrade`), but it writes the same bytes: on the
 * 1.3M-file ImageNet-shaped table the output equals `fanstore upgrade`'s byte for byte (header, entries, attributes,
 * buckets, names; the job area is this tool's: rank 0 of 1, generation 1). Format 2 as its README had it: 72-byte
 * entries, children array, NUL-terminated keys, 24-byte bodies. */
#include "crc32c_ref.h"
#include "meta3_build.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct v2_entry {
    uint64_t hash, size;
    int64_t  mtime_sec;
    uint32_t mtime_nsec, mode, uid, gid;
    uint64_t key_off;
    uint32_t key_len, parent, first_child, child_count, flags;
    int32_t  partition;
} v2_entry;
_Static_assert(sizeof(v2_entry) == 72, "format 2 entry");

typedef struct v2_body {
    uint64_t offset, stored;
    uint32_t crc;
    uint8_t  codec, pad[3];
} v2_body;
_Static_assert(sizeof(v2_body) == 24, "format 2 body");

static uint64_t get64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint32_t get32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s <format-2 table> <format-3 out>\n", argv[0]);
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[1]);
        return 1;
    }
    const unsigned char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED || get32(m + 8) != 0x020048a0u) {
        fprintf(stderr, "%s: not a format-2 table\n", argv[1]);
        return 1;
    }
    uint64_t count = get64(m + 16);
    const v2_entry *e = (const v2_entry *)(m + get64(m + 32));
    const uint32_t *children = (const uint32_t *)(m + get64(m + 48));
    const char *strings = (const char *)(m + get64(m + 64));
    const v2_body *bodies = (const v2_body *)(m + get64(m + 80));
    m3_node *nodes = m3_alloc(count * sizeof *nodes);
    for (uint64_t i = 0; i < count; i++) {
        m3_node *n = &nodes[i];
        *n = (m3_node){ .key = strings + e[i].key_off, .key_len = e[i].key_len, .mode = e[i].mode, .uid = e[i].uid,
                        .gid = e[i].gid, .mtime_ns = e[i].mtime_sec * 1000000000 + e[i].mtime_nsec,
                        .size = e[i].size, .flags = e[i].flags, .partition = e[i].partition,
                        .body_offset = bodies[i].offset, .crc = bodies[i].crc, .stored = (uint32_t)bodies[i].stored };
        if (S_ISDIR(e[i].mode)) {
            n->children = children + e[i].first_child;
            n->child_count = e[i].child_count;
        } else if (S_ISLNK(e[i].mode)) {
            n->target = n->key + n->key_len + 1;
            n->target_len = e[i].child_count;
        }
    }
    m3_header hd = { .partitions = get32(m + 104), .broadcast = get32(m + 108), .st_dev = get32(m + 112),
                     .dataset_id = get64(m + 96) };
    m3_out o = m3_build(nodes, (uint32_t)count, hd, "/tmp/fanstore-local", 1);
    int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    size_t done = 0;
    while (out >= 0 && done < o.len) {
        ssize_t w = write(out, o.bytes + done, o.len - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    if (out < 0 || done != o.len || close(out) != 0) {
        perror(argv[2]);
        return 1;
    }
    printf("%llu entries: format 2 %llu bytes (%.1f per entry), format 3 %llu bytes (%.1f per entry)\n",
           (unsigned long long)count, (unsigned long long)get64(m + 88), (double)get64(m + 88) / (double)count,
           (unsigned long long)o.table_len, (double)o.table_len / (double)count);
    return 0;
}
