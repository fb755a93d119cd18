/* output_journal: validation of the journal header and its records (layout in output_journal.h). Everything is
 * bounds-checked against the published end: a torn or foreign file yields -EPROTO, never a read past it. */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "output_journal.h"

int fs_oj_check(const void *base, size_t size)
{
    const fs_oj_header *h = base;
    if (size < FS_OJ_HEADER_SIZE || memcmp(h->magic, FS_OJ_MAGIC, sizeof h->magic) != 0)
        return -EPROTO;
    if (atomic_load_explicit(&h->version, memory_order_acquire) != FS_OJ_VERSION)
        return -EPROTO;
    if (h->capacity != size || h->staging_len == 0 || h->staging_len >= FS_OJ_HEADER_SIZE - FS_OJ_STAGING_OFFSET)
        return -EPROTO;
    return 0;
}

int64_t fs_oj_next(const void *base, uint64_t pos, uint64_t end, const fs_oj_record **out)
{
    if (pos % FS_OJ_ALIGNMENT != 0 || pos + sizeof(fs_oj_record) > end)
        return -EPROTO;
    const fs_oj_record *r = (const fs_oj_record *)((const uint8_t *)base + pos);
    uint64_t need = sizeof *r + (uint64_t)r->key_len + r->target_len;
    if (r->length < need || r->length % FS_OJ_ALIGNMENT != 0 || pos + r->length > end)
        return -EPROTO;
    if (r->kind < FS_OJ_FILE || r->kind > FS_OJ_RENAME || (r->kind == FS_OJ_RENAME) != (r->target_len > 0))
        return -EPROTO;
    *out = r;
    return (int64_t)(pos + r->length);
}
