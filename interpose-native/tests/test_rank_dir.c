// link:
// valgrind: yes
/* rank_dir.h is the golden list tests/vectors/layout/rank-dir.txt, line for line (RankDirectoryTest checks
 * the Java side against the same file). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rank_dir.h"

typedef struct { const char *id, *place, *name, *kind; int mode; } entry;

#define AS_ENTRY(id, place, name, kind, mode) { #id, place, name, kind, mode },
static const entry header[] = { FS_RANK_DIR_LIST(AS_ENTRY) };
static const size_t header_count = sizeof header / sizeof header[0];

static int failures;

static void expect_str(size_t line, const char *what, const char *want, const char *got)
{
    if (strcmp(want, got) != 0) {
        fprintf(stderr, "rank-dir.txt entry %zu: %s is '%s' in the golden list, '%s' in rank_dir.h\n", line, what,
                want, got);
        failures++;
    }
}

int main(void)
{
    const char *repo = getenv("FANSTORE_REPO");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/vectors/layout/rank-dir.txt", repo ? repo : "..");
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    char line[512];
    size_t n = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char id[64], place[64], name[128], kind[16], mode[16];
        if (line[0] == '#' || strspn(line, " \t\r\n") == strlen(line))
            continue;
        if (sscanf(line, "%63s %63s %127s %15s %15s", id, place, name, kind, mode) != 5) {
            fprintf(stderr, "rank-dir.txt: malformed line: %s", line);
            failures++;
            continue;
        }
        if (n >= header_count) {
            fprintf(stderr, "rank-dir.txt lists %s, missing from rank_dir.h\n", id);
            failures++;
            n++;
            continue;
        }
        const entry *e = &header[n];
        expect_str(n, "id", id, e->id);
        expect_str(n, "place", place, e->place);
        expect_str(n, "name", name, e->name);
        expect_str(n, "kind", kind, e->kind);
        int want = strcmp(mode, "-") == 0 ? -1 : (int)strtol(mode, NULL, 8);
        if (want != e->mode) {
            fprintf(stderr, "rank-dir.txt entry %zu (%s): mode %s in the golden list, %o in rank_dir.h\n", n, id,
                    mode, e->mode);
            failures++;
        }
        n++;
    }
    fclose(f);
    if (n != header_count) {
        fprintf(stderr, "rank-dir.txt has %zu names, rank_dir.h %zu\n", n, header_count);
        failures++;
    }
    if (failures == 0)
        printf("rank_dir.h matches rank-dir.txt (%zu names)\n", header_count);
    return failures == 0 ? 0 : 1;
}
