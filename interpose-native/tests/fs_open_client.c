/* fs_open_client: reads files of a running job the way the shim does, without interposition, so the runtime's
 * side (table, cache view, shared-memory protocol, materialisation, remote fetch) is tested on its own.
 *
 *   fs_open_client <shm_dir> <keys_file> [--cache-usage] [--hot KEY]
 *
 * For each key (one per line, mount-relative): look it up in meta.tbl; LOCAL_RAW entries are opened at
 * <local_root>/<key> (through fs_wire_open if not unpacked yet); others at <shm_dir>/cache/e<index> when the
 * runtime already materialised them (setting their reference bit, as the shim does), else through fs_wire_open.
 * Prints "<fnv1a64 of content, hex> <bytes> <key>" or "ERR <errno> <key>". With --cache-usage, also prints
 * "CACHE <bytes>" after each open: the bytes of files in <shm_dir>/cache and in the local cache directory at that
 * moment, so a test can check the bound from outside. With --hot KEY, KEY is opened again after every key and
 * "HOT <direct|runtime> <inode> <hash> <bytes>" printed (how it was opened, and the cache file's inode: the same inode means never evicted);
 * at the end "GONE <n> <m>": n of the m keys read through the cache (not KEY, not LOCAL_RAW) are no longer in it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/cache_view.h"
#include "../src/meta_table.h"
#include "../src/rank_dir.h"
#include "../src/wire_client.h"

static long long dir_usage(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    long long total = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            total += st.st_size;
    }
    closedir(d);
    return total;
}

/* Both cache directories: the bound covers the tmpfs one and the node-local one together. */
static long long cache_usage(const char *shm_dir, const fs_cache *c)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/" FS_RANK_CACHE_DIR, shm_dir);
    return dir_usage(dir) + (c->ref != NULL && c->local_dir_len > 0 ? dir_usage(c->local_dir) : 0);
}

static int hash_fd(int fd, unsigned long long *hash, long long *bytes)
{
    unsigned long long h = 0xcbf29ce484222325ULL;
    long long n = 0;
    static unsigned char buf[1 << 16];
    ssize_t r;
    while ((r = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < r; i++) {
            h ^= buf[i];
            h *= 0x100000001b3ULL;
        }
        n += r;
    }
    *hash = h;
    *bytes = n;
    return r < 0 ? -errno : 0;
}

typedef struct opened {
    unsigned long long hash;
    long long bytes;
    int direct;                  /* 1: from the cache without a request */
    unsigned long long ino;
} opened;

static int read_path(const char *path, opened *o)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    o->ino = fstat(fd, &st) == 0 ? (unsigned long long)st.st_ino : 0;
    int rc = hash_fd(fd, &o->hash, &o->bytes);
    close(fd);
    return rc;
}

/* Opens and hashes one entry as the shim's open_backing does. */
static int read_entry(const fs_table *table, const fs_cache *cache, fs_wire *wire, const char *key, size_t len,
                      uint32_t idx, opened *o)
{
    const fs_entry *e = fs_table_entry(table, idx);
    char target[8192];
    int rc = -ENOENT;
    o->direct = 0;
    if (fs_entry_local_raw(table, e)) {
        snprintf(target, sizeof target, "%s/%s", table->local_root, key);
        rc = read_path(target, o);
    } else if (cache->ref != NULL && fs_cache_path(cache, idx, fs_entry_size(e), target, sizeof target) == 0) {
        rc = read_path(target, o);
        o->direct = rc == 0;
        if (rc == 0)
            fs_cache_touch(cache, idx);
    }
    /* As the shim: anything not local-and-unpacked or already materialised is asked of the runtime. */
    if (rc == -ENOENT) {
        rc = fs_wire_open(wire, key, len, idx, table->generation, O_RDONLY, target, sizeof target);
        if (rc == 0) {
            rc = read_path(target, o);
            size_t n = table->local_root_len;
            if (strncmp(target, table->local_root, n) != 0 || target[n] != '/')
                fs_cache_release_pin(target);   /* as the shim: any answer but an unpacked file is a pin */
        }
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s <shm_dir> <keys_file> [--cache-usage] [--hot KEY]\n", argv[0]);
        return 2;
    }
    int show_cache = 0;
    const char *hot = NULL;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--cache-usage") == 0)
            show_cache = 1;
        else if (strcmp(argv[i], "--hot") == 0 && i + 1 < argc)
            hot = argv[++i];
        else {
            fprintf(stderr, "fs_open_client: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    char path[8192];
    snprintf(path, sizeof path, "%s/" FS_RANK_META_TABLE, argv[1]);
    fs_table table;
    int rc = fs_table_open(path, &table);
    if (rc != 0) {
        fprintf(stderr, "fs_open_client: cannot open %s: %s\n", path, strerror(-rc));
        return 1;
    }
    fs_cache cache;
    rc = fs_cache_attach(&cache, argv[1], table.entry_count, table.local_root, table.local_root_len);
    if (rc != 0)
        fprintf(stderr, "fs_open_client: no cache view (%s): every file goes through the runtime\n", strerror(-rc));
    snprintf(path, sizeof path, "%s/" FS_RANK_CONTROL_FILE, argv[1]);
    fs_wire *wire = NULL;
    rc = fs_wire_attach(&wire, path);
    if (rc != 0) {
        fprintf(stderr, "fs_open_client: cannot attach %s: %s\n", path, strerror(-rc));
        return 1;
    }
    int64_t hot_idx = hot == NULL ? -1 : fs_table_lookup(&table, hot, strlen(hot));
    if (hot != NULL && hot_idx < 0) {
        fprintf(stderr, "fs_open_client: no such key %s\n", hot);
        return 1;
    }
    FILE *keys = fopen(argv[2], "r");
    if (!keys) {
        perror(argv[2]);
        return 1;
    }
    char key[4096];
    int failures = 0;
    uint32_t *cached = NULL;       /* indices read through the cache, for GONE */
    size_t n_cached = 0, cap_cached = 0;
    while (fgets(key, sizeof key, keys)) {
        size_t len = strcspn(key, "\n");
        key[len] = '\0';
        int64_t idx = fs_table_lookup(&table, key, len);
        if (idx < 0) {
            printf("ERR %d %s\n", ENOENT, key);
            failures++;
            continue;
        }
        opened o;
        rc = read_entry(&table, &cache, wire, key, len, (uint32_t)idx, &o);
        if (rc != 0) {
            printf("ERR %d %s\n", -rc, key);
            failures++;
        } else {
            printf("%016llx %lld %s\n", o.hash, o.bytes, key);
        }
        if (!fs_entry_local_raw(&table, fs_table_entry(&table, (uint32_t)idx)) && idx != hot_idx) {
            if (n_cached == cap_cached) {
                cap_cached = cap_cached ? 2 * cap_cached : 64;
                cached = realloc(cached, cap_cached * sizeof *cached);
                if (cached == NULL)
                    return 1;
            }
            cached[n_cached++] = (uint32_t)idx;
        }
        if (show_cache)
            printf("CACHE %lld\n", cache_usage(argv[1], &cache));
        if (hot != NULL) {
            rc = read_entry(&table, &cache, wire, hot, strlen(hot), (uint32_t)hot_idx, &o);
            if (rc != 0) {
                printf("ERR %d %s\n", -rc, hot);
                failures++;
            } else {
                printf("HOT %s %llu %016llx %lld\n", o.direct ? "direct" : "runtime", o.ino, o.hash, o.bytes);
            }
        }
    }
    if (hot != NULL) {
        int gone = 0;
        for (size_t i = 0; i < n_cached; i++) {
            struct stat st;
            uint64_t size = fs_entry_size(fs_table_entry(&table, cached[i]));
            if (cache.ref != NULL && fs_cache_path(&cache, cached[i], size, path, sizeof path) == 0 &&
                stat(path, &st) != 0 && errno == ENOENT)
                gone++;
        }
        printf("GONE %d %zu\n", gone, n_cached);
    }
    free(cached);
    fclose(keys);
    fs_wire_detach(wire);
    fs_cache_detach(&cache);
    fs_table_close(&table);
    return failures ? 1 : 0;
}
