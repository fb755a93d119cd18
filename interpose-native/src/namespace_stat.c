/* namespace_stat: the stat, statx, statfs/statvfs pictures of an entry or a committed output, and the access(2)
 * answer (see namespace.h). Pure functions of the table and output_view's immutable states: no locks, no calls. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "namespace.h"
#include "output_view.h"

_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "stat and stat64 share one layout here");

static uint64_t blocks_of(uint32_t mode, uint64_t size)
{
    if (S_ISLNK(mode))
        return 0;
    return (size + 4095) / 4096 * 8;
}

/* A directory's children are the entries [first, first + count) (validated inside the table). */
static uint32_t nlink_of(const fs_table *t, const fs_entry *e, uint32_t mode)
{
    if (!S_ISDIR(mode))
        return 1;
    uint32_t n = 2;
    const fs_entry *c = fs_table_entry(t, fs_dir_first(e)), *end = c + fs_dir_count(e);
    for (; c < end; c++)
        n += S_ISDIR(fs_entry_mode(t, c)) ? 1 : 0;
    return n;
}

/* The stat picture of a committed output: owned by the job's user, mtime as committed. */
static void output_stat(const fs_table *t, uint32_t idx, struct stat *st)
{
    const fs_ov_state *o = fs_ov_state_of(idx - (uint32_t)t->entry_count);
    memset(st, 0, sizeof *st);
    st->st_dev = t->st_dev;
    st->st_ino = (ino_t)idx + 1;
    if (o == NULL)
        return;
    st->st_mode = o->mode;
    st->st_nlink = S_ISDIR(o->mode) ? 2 : 1;
    st->st_uid = getuid();
    st->st_gid = getgid();
    st->st_size = S_ISDIR(o->mode) ? 4096 : (off_t)o->size;
    st->st_blksize = 4096;
    st->st_blocks = (blkcnt_t)((st->st_size + 4095) / 4096 * 8);
    st->st_mtim.tv_sec = o->mtime_ns / 1000000000;
    st->st_mtim.tv_nsec = o->mtime_ns % 1000000000;
    st->st_atim = st->st_mtim;
    st->st_ctim = st->st_mtim;
}

void fs_ns_stat(const fs_table *t, uint32_t idx, struct stat *st)
{
    if (fs_ns_is_output(t, idx)) {
        output_stat(t, idx, st);
        return;
    }
    const fs_entry *e = fs_table_entry(t, idx);
    const fs_attr *a = fs_entry_attrs(t, e);
    uint64_t size = fs_entry_size(e);
    int64_t sec;
    uint32_t nsec;
    fs_entry_mtime(e, &sec, &nsec);
    memset(st, 0, sizeof *st);
    st->st_dev = t->st_dev;
    st->st_ino = (ino_t)idx + 1;
    st->st_mode = a->mode;
    st->st_nlink = nlink_of(t, e, a->mode);
    st->st_uid = a->uid;
    st->st_gid = a->gid;
    st->st_size = (off_t)size;
    st->st_blksize = 4096;
    st->st_blocks = (blkcnt_t)blocks_of(a->mode, size);
    st->st_mtim.tv_sec = sec;
    st->st_mtim.tv_nsec = nsec;
    st->st_atim = st->st_mtim;
    st->st_ctim = st->st_mtim;
}

void fs_ns_statx(const fs_table *t, uint32_t idx, struct statx *stx)
{
    if (fs_ns_is_output(t, idx)) {
        struct stat st;
        output_stat(t, idx, &st);
        memset(stx, 0, sizeof *stx);
        stx->stx_mask = STATX_BASIC_STATS;
        stx->stx_blksize = 4096;
        stx->stx_nlink = (uint32_t)st.st_nlink;
        stx->stx_uid = st.st_uid;
        stx->stx_gid = st.st_gid;
        stx->stx_mode = (uint16_t)st.st_mode;
        stx->stx_ino = st.st_ino;
        stx->stx_size = (uint64_t)st.st_size;
        stx->stx_blocks = (uint64_t)st.st_blocks;
        stx->stx_mtime.tv_sec = st.st_mtim.tv_sec;
        stx->stx_mtime.tv_nsec = (uint32_t)st.st_mtim.tv_nsec;
        stx->stx_atime = stx->stx_mtime;
        stx->stx_ctime = stx->stx_mtime;
        stx->stx_dev_major = major(t->st_dev);
        stx->stx_dev_minor = minor(t->st_dev);
        return;
    }
    const fs_entry *e = fs_table_entry(t, idx);
    const fs_attr *a = fs_entry_attrs(t, e);
    uint64_t size = fs_entry_size(e);
    int64_t sec;
    uint32_t nsec;
    fs_entry_mtime(e, &sec, &nsec);
    memset(stx, 0, sizeof *stx);
    stx->stx_mask = STATX_BASIC_STATS;   /* everything but btime/mnt_id; the table has no birth time */
    stx->stx_blksize = 4096;
    stx->stx_nlink = nlink_of(t, e, a->mode);
    stx->stx_uid = a->uid;
    stx->stx_gid = a->gid;
    stx->stx_mode = (uint16_t)a->mode;
    stx->stx_ino = (uint64_t)idx + 1;
    stx->stx_size = size;
    stx->stx_blocks = blocks_of(a->mode, size);
    stx->stx_attributes_mask = STATX_ATTR_IMMUTABLE;
    stx->stx_mtime.tv_sec = sec;
    stx->stx_mtime.tv_nsec = nsec;
    stx->stx_atime = stx->stx_mtime;
    stx->stx_ctime = stx->stx_mtime;
    stx->stx_dev_major = major(t->st_dev);
    stx->stx_dev_minor = minor(t->st_dev);
}

static uint64_t total_blocks(const fs_table *t)
{
    uint64_t b = 0;
    for (uint64_t i = 0; i < t->entry_count; i++)
        b += (fs_entry_size(&t->entries[i]) + 4095) / 4096;
    return b;
}

void fs_ns_statfs(const fs_table *t, struct statfs *sf)
{
    memset(sf, 0, sizeof *sf);
    sf->f_type = FS_NS_MAGIC;
    sf->f_bsize = 4096;
    sf->f_frsize = 4096;
    sf->f_blocks = total_blocks(t);
    sf->f_files = t->entry_count;
    sf->f_namelen = 255;
    memcpy(&sf->f_fsid, &t->st_dev, sizeof t->st_dev);
    sf->f_flags = ST_NOSUID | ST_NODEV;   /* writable: the job creates outputs here */
}

void fs_ns_statvfs(const fs_table *t, struct statvfs *sv)
{
    memset(sv, 0, sizeof *sv);
    sv->f_bsize = 4096;
    sv->f_frsize = 4096;
    sv->f_blocks = total_blocks(t);
    sv->f_files = t->entry_count;
    sv->f_fsid = t->st_dev;
    sv->f_flag = ST_NOSUID | ST_NODEV;
    sv->f_namemax = 255;
}

int fs_ns_access(const fs_table *t, uint32_t idx, int mode, int effective)
{
    if (fs_ns_is_output(t, idx))
        return 0;   /* the job's own files: it may read them and write them anew */
    const fs_attr *e = fs_entry_attrs(t, fs_table_entry(t, idx));
    if (mode == F_OK)
        return 0;
    if (mode & W_OK)
        return -EROFS;
    uid_t uid = effective ? geteuid() : getuid();
    gid_t gid = effective ? getegid() : getgid();
    unsigned bits;
    if (uid == 0) {
        /* root reads anything and executes when any x bit is set (or for a directory). */
        if ((mode & X_OK) && !S_ISDIR(e->mode) && !(e->mode & 0111))
            return -EACCES;
        return 0;
    }
    if (uid == e->uid)
        bits = (e->mode >> 6) & 7;
    else if (gid == e->gid || group_member(e->gid))
        bits = (e->mode >> 3) & 7;
    else
        bits = e->mode & 7;
    if ((mode & R_OK) && !(bits & 4))
        return -EACCES;
    if ((mode & X_OK) && !(bits & 1))
        return -EACCES;
    return 0;
}
