// link: meta_table.c meta_table_lookup.c
// valgrind: yes
/* Two writers, one format: tests/meta3_build.h (C, written from the table README) rebuilds basic.tbl's namespace
 * from what basic.expect says of every entry, and must produce the Java writer's bytes (MetadataTableWriter):
 * the header up to the job area, then entries, attributes, buckets and names, byte for byte. A difference names its
 * offset. This pins the breadth-first order, name suffixes, attribute order, bucket insertion and section layout
 * that the C reader's other tests take from tests/meta3_build.h's tables. */
#include "meta_expect.h"
#include "meta3_build.h"

#define MAX 256

static m3_node nodes[MAX];
static uint32_t kids[MAX][MAX];
static char *children_of[MAX];
static uint32_t count;

static void parse_entry(const char *line)
{
    static char buf[8192];
    uint32_t i = (uint32_t)atoi(need(line, "index", buf, sizeof buf));
    CHECK(i < MAX, "index %u", i);
    if (i >= MAX)
        return;
    count = i + 1 > count ? i + 1 : count;
    m3_node *n = &nodes[i];
    char *key = malloc(4096);
    n->key = key;
    n->key_len = (uint32_t)unhex(need(line, "key", buf, sizeof buf), key);
    n->mode = (uint32_t)strtoul(need(line, "mode", buf, sizeof buf), NULL, 8);
    n->size = strtoull(need(line, "size", buf, sizeof buf), NULL, 10);
    long long sec = 0;
    unsigned nsec = 0;
    sscanf(need(line, "mtime", buf, sizeof buf), "%lld.%u", &sec, &nsec);
    n->mtime_ns = sec * 1000000000ll + nsec;
    n->uid = (uint32_t)strtoul(need(line, "uid", buf, sizeof buf), NULL, 10);
    n->gid = (uint32_t)strtoul(need(line, "gid", buf, sizeof buf), NULL, 10);
    n->flags = (uint32_t)strtoul(need(line, "flags", buf, sizeof buf), NULL, 10) & ~FS_ENTRY_NAME_EXTENDS;
    n->partition = (int32_t)strtol(need(line, "partition", buf, sizeof buf), NULL, 10);
    n->body_offset = strtoull(need(line, "body_offset", buf, sizeof buf), NULL, 10);
    n->stored = (uint32_t)strtoul(need(line, "stored_length", buf, sizeof buf), NULL, 10);
    n->crc = (uint32_t)strtoul(need(line, "body_crc", buf, sizeof buf), NULL, 16);
    need(line, "target", buf, sizeof buf);
    if (strcmp(buf, "-") != 0) {
        char *target = malloc(4096);
        n->target = target;
        n->target_len = (uint32_t)unhex(buf, target);
    }
    children_of[i] = strdup(need(line, "children", buf, sizeof buf));
}

/* Node whose key is dir's key + "/" + name (or name under the root). */
static int64_t child_node(uint32_t dir, const char *name, size_t len)
{
    char key[8192];
    size_t k = 0;
    if (nodes[dir].key_len > 0) {
        memcpy(key, nodes[dir].key, nodes[dir].key_len);
        key[nodes[dir].key_len] = '/';
        k = nodes[dir].key_len + 1;
    }
    memcpy(key + k, name, len);
    for (uint32_t i = 0; i < count; i++)
        if (nodes[i].key_len == k + len && memcmp(nodes[i].key, key, k + len) == 0)
            return i;
    return -1;
}

static void link_children(void)
{
    for (uint32_t i = 0; i < count; i++) {
        if (!S_ISDIR(nodes[i].mode))
            continue;
        char *list = children_of[i], *save = NULL;
        for (char *hexname = strtok_r(list, ",", &save); hexname != NULL; hexname = strtok_r(NULL, ",", &save)) {
            char name[512];
            size_t len = unhex(hexname, name);
            int64_t c = child_node(i, name, len);
            CHECK(c > 0, "child %s of entry %u", hexname, i);
            if (c > 0)
                kids[i][nodes[i].child_count++] = (uint32_t)c;
        }
        nodes[i].children = kids[i];
    }
}

int main(void)
{
    const char *repo = getenv("FANSTORE_REPO");
    snprintf(vectors, sizeof vectors, "%s/tests/vectors/metadata", repo ? repo : "..");
    FILE *f = fopen(vector_path("basic.expect"), "r");
    CHECK(f != NULL, "basic.expect");
    if (f == NULL)
        return 1;
    char *line = NULL, buf[8192], root[4096];
    size_t cap = 0;
    m3_header hd = { 0 };
    size_t root_len = 0;
    while (getline(&line, &cap, f) > 0) {
        if (strncmp(line, "entry ", 6) == 0) {
            parse_entry(line);
        } else if (strncmp(line, "header ", 7) == 0) {
            hd.partitions = (uint32_t)strtoul(need(line, "partitions", buf, sizeof buf), NULL, 10);
            hd.broadcast = (uint32_t)strtoul(need(line, "broadcast", buf, sizeof buf), NULL, 10);
            hd.st_dev = (uint32_t)strtoul(need(line, "st_dev", buf, sizeof buf), NULL, 10);
            hd.dataset_id = strtoull(need(line, "dataset_id", buf, sizeof buf), NULL, 16);
            root_len = unhex(need(line, "local_root", buf, sizeof buf), root);
        }
    }
    free(line);
    fclose(f);
    root[root_len] = '\0';
    link_children();
    CHECK(count > 20, "%u entries in basic.expect", count);
    m3_out o = m3_build(nodes, count, hd, root, 1);

    FILE *t = fopen(vector_path("basic.tbl"), "rb");
    static unsigned char java[1 << 16];
    size_t len = t ? fread(java, 1, sizeof java, t) : 0;
    if (t)
        fclose(t);
    uint64_t java_len;
    memcpy(&java_len, java + 88, 8);
    CHECK(java_len == o.table_len && java_len <= len, "table length: Java %llu, C %llu", (unsigned long long)java_len,
          (unsigned long long)o.table_len);
    if (java_len == o.table_len && java_len <= len) {
        size_t diff = SIZE_MAX;
        for (size_t k = 0; k < java_len && diff == SIZE_MAX; k++)
            if ((k < 120 || k >= FS_META_HEADER_SIZE) && java[k] != o.bytes[k])
                diff = k;
        CHECK(diff == SIZE_MAX, "first differing byte at offset %zu: Java %02x, C %02x", diff,
              diff == SIZE_MAX ? 0 : java[diff], diff == SIZE_MAX ? 0 : o.bytes[diff]);
        if (diff == SIZE_MAX)
            printf("writers agree: basic.tbl, %llu bytes, %u entries\n", (unsigned long long)java_len, count);
    }
    free(o.bytes);
    for (uint32_t i = 0; i < count; i++)
        free((char *)nodes[i].key), free((char *)nodes[i].target), free(children_of[i]);
    if (failures)
        fprintf(stderr, "test_meta_table_writers: %d failures\n", failures);
    return failures ? 1 : 0;
}
