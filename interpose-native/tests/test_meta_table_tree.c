// link: meta_table.c meta_table_lookup.c
// valgrind: yes
/* meta_table reader on trees the golden vectors do not have, written by tests/meta3_build.h (a second writer of
 * format 3, from the table README): random trees with ImageNet-like names (a file's name extends its directory's),
 * names of every byte but '/' and NUL, names of 255 bytes (stored or extended), deep chains, empty directories and
 * symlinks. Every key is found at its entry, rebuilt by fs_table_key, named by fs_entry_name; every directory lists
 * its children in name order; keys that are not in the tree (near misses) are absent. Then each validation rule of
 * the README: one field of a good table broken at a time, each refused with -EINVAL. */
#include "crc32c_ref.h"
#include "meta3_build.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* A tree being made: nodes with owned keys and child lists. */
#define MAX_NODES 20000
static m3_node nodes[MAX_NODES];
static uint32_t *kids[MAX_NODES];
static uint32_t node_count;

static uint32_t add(uint32_t parent, const char *name, size_t len, uint32_t mode)
{
    uint32_t i = node_count++;
    const m3_node *p = &nodes[parent];
    char *key = malloc(p->key_len + 1 + len + 1);
    size_t k = 0;
    if (p->key_len > 0) {
        memcpy(key, p->key, p->key_len);
        key[p->key_len] = '/';
        k = p->key_len + 1;
    }
    memcpy(key + k, name, len);
    key[k + len] = '\0';
    nodes[i] = (m3_node){ .key = key, .key_len = (uint32_t)(k + len), .mode = mode, .uid = 1000 + (uint32_t)(i % 3),
                          .gid = 100, .mtime_ns = (int64_t)(next() % 4000000000000000000ull) - 1000000000000000000,
                          .partition = -1 };
    if (S_ISREG(mode)) {
        nodes[i].size = next() % 5000000000ull;
        nodes[i].partition = (int32_t)(next() % 5) - 1;   /* -1: broadcast 0 */
        nodes[i].flags = (uint32_t)(next() % 2) * FS_ENTRY_UNPACKABLE;
    }
    if (parent != i) {
        kids[parent] = realloc(kids[parent], (nodes[parent].child_count + 1) * sizeof(uint32_t));
        kids[parent][nodes[parent].child_count++] = i;
    }
    return i;
}

static int by_name(const void *a, const void *b)
{
    uint32_t la, lb;
    const char *na = m3_name(&nodes[*(const uint32_t *)a], &la), *nb = m3_name(&nodes[*(const uint32_t *)b], &lb);
    int c = memcmp(na, nb, la < lb ? la : lb);
    return c != 0 ? c : (la > lb) - (la < lb);
}

/* A name not yet among parent's children (random bytes but '/' and NUL, or prefix + random digits). */
static size_t fresh_name(uint32_t parent, const char *prefix, size_t plen, char *out, size_t max, const char *suffix)
{
    for (;;) {
        size_t len = plen;
        memcpy(out, prefix, plen);
        size_t extra = 1 + next() % (max - plen);
        for (size_t k = 0; k < extra; k++) {
            char c = prefix != NULL && plen > 0 ? (char)('0' + next() % 10) : (char)(1 + next() % 255);
            out[len++] = c == '/' ? 'x' : c;
        }
        memcpy(out + len, suffix, strlen(suffix));
        len += strlen(suffix);
        int clash = 0;
        for (uint32_t k = 0; k < nodes[parent].child_count && !clash; k++) {
            uint32_t l;
            const char *n = m3_name(&nodes[kids[parent][k]], &l);
            clash = l == len && memcmp(n, out, len) == 0;
        }
        if (!clash)
            return len;
    }
}

static void make_tree(void)
{
    node_count = 0;
    add(0, "", 0, S_IFDIR | 0755);
    uint32_t ds = add(0, "dataset", 7, S_IFDIR | 0750);
    uint32_t train = add(ds, "train", 5, S_IFDIR | 0755);
    char name[300];
    for (int c = 0; c < 40; c++) {
        int n = snprintf(name, sizeof name, "n%08d", 1440764 + 137 * c);
        uint32_t cls = add(train, name, (size_t)n, S_IFDIR | 0755);
        int files = 1 + (int)(next() % 200);
        for (int f = 0; f < files; f++) {
            char fn[300];
            size_t l = fresh_name(cls, name, (size_t)n, fn, (size_t)n + 8, ".JPEG");
            add(cls, fn, l, S_IFREG | 0644);
        }
    }
    /* Names of any byte, 255-byte names stored and extended, an empty directory, symlinks, a deep chain. */
    uint32_t odd = add(ds, "odd", 3, S_IFDIR | 0700);
    for (int f = 0; f < 300; f++) {
        size_t l = fresh_name(odd, NULL, 0, name, 40, "");
        add(odd, name, l, f % 7 == 0 ? S_IFLNK | 0777 : S_IFREG | 0600);
    }
    memset(name, 'L', 255);
    uint32_t longd = add(ds, name, 200, S_IFDIR | 0755);
    add(longd, name, 255, S_IFREG | 0644);         /* extends the parent by 55 bytes */
    memset(name, 'M', 255);
    add(longd, name, 255, S_IFREG | 0644);         /* stored whole */
    add(ds, "empty", 5, S_IFDIR | 0755);
    uint32_t d = ds;
    for (int depth = 0; depth < 60; depth++) {
        int n = snprintf(name, sizeof name, "d%d", depth);
        d = add(d, name, (size_t)n, S_IFDIR | 0755);
        if (depth % 10 == 0)
            add(d, "f", 1, S_IFREG | 0444);
    }
    add(0, "other", 5, S_IFDIR | 0755);
    for (uint32_t i = 0; i < node_count; i++) {
        if (S_ISLNK(nodes[i].mode)) {
            nodes[i].target = "train/n01/b.jpg/../../x";
            nodes[i].target_len = (uint32_t)strlen(nodes[i].target);
        }
        if (S_ISDIR(nodes[i].mode)) {
            qsort(kids[i], nodes[i].child_count, sizeof(uint32_t), by_name);
            nodes[i].children = kids[i];
        }
    }
}

static char path[] = "/tmp/fanstore-meta-tree-XXXXXX";

/* Writes bytes to the scratch file and opens it. */
static int open_bytes(const unsigned char *b, size_t len, fs_table *t)
{
    int fd = open(path, O_WRONLY | O_TRUNC);
    CHECK(fd >= 0 && write(fd, b, len) == (ssize_t)len, "write %s", path);
    close(fd);
    return fs_table_open(path, t);
}

static void check_tree(const fs_table *t)
{
    char buf[8192];
    uint32_t extended = 0;
    for (uint32_t i = 0; i < node_count; i++) {
        const m3_node *n = &nodes[i];
        int64_t idx = fs_table_lookup(t, n->key, n->key_len);
        CHECK(idx >= 0, "lookup %s", n->key);
        if (idx < 0)
            continue;
        const fs_entry *e = fs_table_entry(t, (uint32_t)idx);
        ssize_t len = fs_table_key(t, (uint32_t)idx, buf, sizeof buf);
        CHECK(len == (ssize_t)n->key_len && memcmp(buf, n->key, n->key_len) == 0 && buf[len] == '\0',
              "key of %lld: %s", (long long)idx, n->key);
        CHECK(n->key_len == 0 || fs_table_key(t, (uint32_t)idx, buf, n->key_len) == -ENAMETOOLONG, "short buffer");
        fs_name nm;
        fs_entry_name(t, e, &nm);
        uint32_t want_len;
        const char *want = m3_name(n, &want_len);
        CHECK(nm.head_len + nm.tail_len == want_len && memcmp(nm.head, want, nm.head_len) == 0 &&
              memcmp(nm.tail, want + nm.head_len, nm.tail_len) == 0, "name of %s", n->key);
        extended += nm.head_len > 0;
        CHECK(fs_entry_mode(t, e) == n->mode && fs_entry_uid(t, e) == n->uid && fs_entry_gid(t, e) == n->gid,
              "attributes of %s", n->key);
        CHECK(fs_entry_mtime_ns(e) == n->mtime_ns, "mtime of %s", n->key);
        int64_t sec;
        uint32_t nsec;
        fs_entry_mtime(e, &sec, &nsec);
        CHECK(nsec < 1000000000u && sec * 1000000000 + nsec == n->mtime_ns, "mtime split of %s", n->key);
        if (S_ISREG(n->mode)) {
            CHECK(fs_entry_size(e) == n->size && fs_entry_partition(t, e) == n->partition, "file %s", n->key);
            CHECK(fs_entry_local_raw(t, e) == ((n->flags & FS_ENTRY_UNPACKABLE) != 0), "local raw %s", n->key);
        } else {
            CHECK(fs_entry_partition(t, e) == FS_NO_PARTITION && !fs_entry_local_raw(t, e), "no body %s", n->key);
        }
        if (S_ISLNK(n->mode))
            CHECK(fs_entry_size(e) == n->target_len &&
                  memcmp(fs_entry_link_target(t, e), n->target, n->target_len) == 0, "target of %s", n->key);
        if (S_ISDIR(n->mode)) {
            CHECK(fs_entry_size(e) == 4096 && fs_dir_count(e) == n->child_count, "directory %s", n->key);
            for (uint32_t k = 0; k < fs_dir_count(e); k++) {
                uint32_t c = fs_dir_first(e) + k;
                CHECK(fs_entry_parent(fs_table_entry(t, c)) == (uint32_t)idx && c > (uint32_t)idx, "child of %s", n->key);
                CHECK(fs_table_lookup(t, nodes[n->children[k]].key, nodes[n->children[k]].key_len) == c,
                      "child %u of %s in name order", k, n->key);
            }
        }
        /* Near misses: one byte more, one less, a changed last byte, the key under a file. */
        memcpy(buf, n->key, n->key_len);
        buf[n->key_len] = 'Z';
        int64_t got = fs_table_lookup(t, buf, n->key_len + 1);
        CHECK(got < 0 || fs_table_key(t, (uint32_t)got, buf + 4096, 4096) == (ssize_t)n->key_len + 1, "%s+Z", n->key);
        if (n->key_len > 1) {
            got = fs_table_lookup(t, n->key, n->key_len - 1);
            CHECK(got < 0 || (fs_table_key(t, (uint32_t)got, buf + 4096, 4096) == (ssize_t)n->key_len - 1 &&
                              memcmp(buf + 4096, n->key, n->key_len - 1) == 0), "%s minus one", n->key);
        }
        if (S_ISREG(n->mode)) {
            memcpy(buf + n->key_len, "/x", 2);
            CHECK(fs_table_lookup(t, buf, n->key_len + 2) == -1, "under a file: %s", n->key);
        }
    }
    CHECK(extended > 1000, "names extending their directory's: %u", extended);
    CHECK(fs_table_lookup(t, "", 0) == 0, "root");
    CHECK(fs_table_lookup(t, "/", 1) == -1 && fs_table_lookup(t, "dataset/", 8) == -1 &&
          fs_table_lookup(t, "/dataset", 8) == -1 && fs_table_lookup(t, "dataset//train", 14) == -1, "empty parts");
    /* A name that extends its parent's is not found under the parent's sibling of another name. */
    CHECK(fs_table_lookup(t, "other/train", 11) == -1 && fs_table_lookup(t, "train", 5) == -1, "wrong parent");
}

/* Entry i's byte offset in the built table. */
static unsigned char *entry_at(const m3_out *o, uint32_t i)
{
    uint64_t off;
    memcpy(&off, o->bytes + 32, 8);
    return o->bytes + off + (uint64_t)i * FS_META_ENTRY_SIZE;
}

static int refused(const m3_out *o, const unsigned char *bytes, const char *what)
{
    fs_table t;
    int rc = open_bytes(bytes, o->len, &t);
    CHECK(rc == -EINVAL && t.base == NULL, "%s: open returned %d", what, rc);
    if (rc == 0)
        fs_table_close(&t);
    return rc == -EINVAL;
}

/* Each validation rule: a copy of the good table with one thing broken. */
static void check_rules(const m3_out *o, const fs_table *t)
{
    unsigned char *bad = malloc(o->len);
#define BREAK(what, stmt) do { memcpy(bad, o->bytes, o->len); { unsigned char *b = bad; (void)b; stmt; } \
    refused(o, bad, what); } while (0)
#define E(i) (bad + (entry_at(o, (i)) - o->bytes))
    uint32_t file = (uint32_t)fs_table_lookup(t, nodes[4].key, nodes[4].key_len);   /* a file under a class */
    uint32_t cls = fs_entry_parent(fs_table_entry(t, file));
    uint32_t link = 0, last = (uint32_t)t->entry_count - 1;
    for (uint32_t i = 0; i < t->entry_count && link == 0; i++)
        link = S_ISLNK(fs_entry_mode(t, fs_table_entry(t, i))) ? i : 0;
    uint32_t emptyd = (uint32_t)fs_table_lookup(t, "dataset/empty", 13);
    CHECK(S_ISREG(fs_entry_mode(t, fs_table_entry(t, file))) && link > 0 && emptyd > 0, "picked entries");
    uint64_t v;
    BREAK("magic", b[0] = 'X');
    BREAK("version", m3_put(b + 8, 0x02002ca0, 4));
    BREAK("B <= E", m3_put(b + 24, t->entry_count, 8));
    BREAK("B >= 2^32", m3_put(b + 24, 1ull << 32, 8));
    BREAK("A = 0", m3_put(b + 56, 0, 8));
    BREAK("A > 65536", m3_put(b + 56, 65537, 8));
    BREAK("entries misaligned", memcpy(&v, b + 32, 8); m3_put(b + 32, v + 4, 8));
    BREAK("names past T", memcpy(&v, b + 72, 8); m3_put(b + 72, v + 4096, 8));
    BREAK("generation 0", m3_put(b + 152, 0, 8));
    BREAK("root not a directory", m3_put(E(0) + FS_E_ATTR, fs_entry_attr(fs_table_entry(t, file)), 2));
    BREAK("root with a name", E(0)[FS_E_NAME_LEN] = 1);
    BREAK("root with flags", E(0)[FS_E_FLAGS] = FS_ENTRY_NAME_EXTENDS);
    BREAK("parent not below", m3_put(E(cls) + FS_E_PARENT, cls, 4));
    BREAK("parent after", m3_put(E(file) + FS_E_PARENT, file + 1, 4));
    BREAK("parent a file", m3_put(E(file + 1) + FS_E_PARENT, file, 4));
    BREAK("child outside its parent's range", m3_put(E(file) + FS_E_PARENT, fs_entry_parent(fs_table_entry(t, cls)), 4));
    BREAK("attribute index >= A", m3_put(E(file) + FS_E_ATTR, (uint32_t)t->attr_count, 2));
    BREAK("attribute index far past A", m3_put(E(file) + FS_E_ATTR, 0xffff, 2));
    BREAK("unknown flag", E(file)[FS_E_FLAGS] |= 0x8);
    BREAK("extends under the root", E(1)[FS_E_FLAGS] |= FS_ENTRY_NAME_EXTENDS);
    BREAK("extends an extending parent", E(cls)[FS_E_FLAGS] |= FS_ENTRY_NAME_EXTENDS);
    BREAK("name past the names", m3_put(E(last) + FS_E_NAME_OFF, 0x7fffffff, 4));
    BREAK("name with '/'", memcpy(&v, b + 64, 8); b[v + fs_entry_stored(t, fs_table_entry(t, file)) - t->names] = '/');
    BREAK("name with NUL", memcpy(&v, b + 64, 8); b[v + fs_entry_stored(t, fs_table_entry(t, file)) - t->names] = 0);
    BREAK("empty name", E(file)[FS_E_NAME_LEN] = 0; E(file)[FS_E_FLAGS] &= (unsigned char)~FS_ENTRY_NAME_EXTENDS);
    BREAK("full name over 255", E(file)[FS_E_NAME_LEN] = 250; E(file)[FS_E_FLAGS] |= FS_ENTRY_NAME_EXTENDS);
    BREAK("ranges overlap", m3_put(E(cls) + FS_E_PARTITION, fs_dir_first(fs_table_entry(t, cls)) - 1, 4));
    BREAK("ranges leave a gap", m3_put(E(cls) + FS_E_CRC, fs_dir_count(fs_table_entry(t, cls)) - 1, 4));
    BREAK("range past E", m3_put(E(0) + FS_E_CRC, 0xffffffffu, 4));
    BREAK("empty directory with a first child", m3_put(E(emptyd) + FS_E_PARTITION, 5, 4));
    BREAK("partition >= P", m3_put(E(file) + FS_E_PARTITION, 4, 4));
    BREAK("broadcast >= BP", m3_put(E(file) + FS_E_PARTITION, (uint32_t)-2, 4));
    BREAK("directory COMPRESSED", E(cls)[FS_E_FLAGS] |= FS_ENTRY_COMPRESSED);
    BREAK("symlink UNPACKABLE", E(link)[FS_E_FLAGS] |= FS_ENTRY_UNPACKABLE);
    BREAK("target past the names", m3_put(E(link) + FS_E_SIZE, t->names_len, 6));
    BREAK("bucket > E", memcpy(&v, b + 40, 8); for (uint64_t k = 0;; k++) { uint32_t x; memcpy(&x, b + v + 4 * k, 4);
          if (x != 0) { m3_put(b + v + 4 * k, (uint32_t)t->entry_count + 1, 4); break; } });
    BREAK("E + 1 buckets used", memcpy(&v, b + 40, 8); for (uint64_t k = 0;; k++) { uint32_t x; memcpy(&x, b + v + 4 * k, 4);
          if (x == 0) { m3_put(b + v + 4 * k, 1, 4); break; } });
    BREAK("local root inside the table", m3_put(b + 136, 0, 8));
#undef BREAK
#undef E
    free(bad);
}

int main(void)
{
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    make_tree();
    m3_out o = m3_build(nodes, node_count, (m3_header){ 4, 1, 42, 0x1122334455667788ull }, "/var/tmp/fanstore-local", 1);
    fs_table t;
    int rc = open_bytes(o.bytes, o.len, &t);
    CHECK(rc == 0, "open the built table: %d", rc);
    if (rc == 0) {
        CHECK(t.entry_count == node_count && t.validated_here, "%llu entries", (unsigned long long)t.entry_count);
        check_tree(&t);
        check_rules(&o, &t);
        printf("tree: %u entries, %.1f bytes per entry, %llu attributes\n", node_count,
               (double)o.table_len / node_count, (unsigned long long)t.attr_count);
        fs_table_close(&t);
    }
    free(o.bytes);
    for (uint32_t i = 0; i < node_count; i++)
        free((char *)nodes[i].key), free(kids[i]);
    unlink(path);
    if (failures)
        fprintf(stderr, "test_meta_table_tree: %d failures\n", failures);
    return failures ? 1 : 0;
}
