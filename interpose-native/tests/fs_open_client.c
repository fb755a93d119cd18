/* fs_open_client: reads files of a running job the way the shim does, without interposition, so the runtime's
 * side (table, shared-memory protocol, materialisation, remote fetch) is tested on its own.
 *
 *   fs_open_client <shm_dir> <keys_file> [--cache-usage]
 *
 * For each key (one per line, mount-relative): look it up in meta.tbl; LOCAL_RAW entries are opened at
 * <local_root>/<key> (through fs_wire_open if not unpacked yet), others through fs_wire_open. Prints "<fnv1a64 of content, hex> <bytes> <key>" or
 * "ERR <errno> <key>". With --cache-usage, also prints "CACHE <bytes>" after each open: the bytes of files in
 * <shm_dir>/cache at that moment, so a test can check the LRU bound from outside. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/meta_table.h"
#include "../src/rank_dir.h"
#include "../src/wire_client.h"

static long long cache_usage(const char *shm_dir)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/" FS_RANK_CACHE_DIR, shm_dir);
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

static int hash_file(const char *path, unsigned long long *hash, long long *bytes)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
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
    int err = r < 0 ? -errno : 0;
    close(fd);
    *hash = h;
    *bytes = n;
    return err;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s <shm_dir> <keys_file> [--cache-usage]\n", argv[0]);
        return 2;
    }
    int show_cache = argc > 3 && strcmp(argv[3], "--cache-usage") == 0;
    char path[8192];
    snprintf(path, sizeof path, "%s/" FS_RANK_META_TABLE, argv[1]);
    fs_table table;
    int rc = fs_table_open(path, &table);
    if (rc != 0) {
        fprintf(stderr, "fs_open_client: cannot open %s: %s\n", path, strerror(-rc));
        return 1;
    }
    snprintf(path, sizeof path, "%s/" FS_RANK_CONTROL_FILE, argv[1]);
    fs_wire *wire = NULL;
    rc = fs_wire_attach(&wire, path);
    if (rc != 0) {
        fprintf(stderr, "fs_open_client: cannot attach %s: %s\n", path, strerror(-rc));
        return 1;
    }
    FILE *keys = fopen(argv[2], "r");
    if (!keys) {
        perror(argv[2]);
        return 1;
    }
    char key[4096];
    int failures = 0;
    while (fgets(key, sizeof key, keys)) {
        size_t len = strcspn(key, "\n");
        key[len] = '\0';
        int64_t idx = fs_table_lookup(&table, key, len);
        if (idx < 0) {
            printf("ERR %d %s\n", ENOENT, key);
            failures++;
            continue;
        }
        const fs_entry *e = fs_table_entry(&table, (uint32_t)idx);
        char target[8192];
        unsigned long long h = 0;
        long long n = 0;
        rc = -ENOENT;
        if (e->flags & FS_ENTRY_LOCAL_RAW) {
            snprintf(target, sizeof target, "%s/%s", table.local_root, key);
            rc = hash_file(target, &h, &n);
        }
        /* As the shim: anything not local-and-unpacked (or not unpacked yet) is asked of the runtime. */
        if (rc == -ENOENT) {
            rc = fs_wire_open(wire, key, len, (uint32_t)idx, table.generation, O_RDONLY, target, sizeof target);
            if (rc == 0)
                rc = hash_file(target, &h, &n);
        }
        if (rc != 0) {
            printf("ERR %d %s\n", -rc, key);
            failures++;
        } else {
            printf("%016llx %lld %s\n", h, n, key);
        }
        if (show_cache)
            printf("CACHE %lld\n", cache_usage(argv[1]));
    }
    fclose(keys);
    fs_wire_detach(wire);
    fs_table_close(&table);
    return failures ? 1 : 0;
}
