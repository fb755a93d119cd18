/* real_libc: the libc functions the shim wraps, resolved with dlsym(RTLD_NEXT) on first use.
 * Owns: one atomic pointer per function. Invariants: a pointer, once stored, never changes; racing resolvers
 * store the same value, so no lock is needed. A nested resolution on the same thread (dlsym reaching one of
 * our wrappers while we are inside dlsym) gets NULL back; REAL() callers then fail with ENOSYS instead of
 * recursing forever. In practice glibc 2.36's dlsym only allocates, which the shim does not wrap. */
#ifndef FANSTORE_REAL_LIBC_H
#define FANSTORE_REAL_LIBC_H

#include <dirent.h>
#include <spawn.h>
#include <sys/uio.h>
#include <glob.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <utime.h>
#include <sys/time.h>
#include <sys/socket.h>

/* X(return type, name, parameter list) for every real function the shim calls. */
#define FS_REAL_FUNCTIONS(X) \
    X(int, open, (const char *, int, ...)) \
    X(int, bind, (int, const struct sockaddr *, socklen_t)) \
    X(int, connect, (int, const struct sockaddr *, socklen_t)) \
    X(int, open64, (const char *, int, ...)) \
    X(int, openat, (int, const char *, int, ...)) \
    X(int, openat64, (int, const char *, int, ...)) \
    X(int, __open_2, (const char *, int)) \
    X(int, __open64_2, (const char *, int)) \
    X(int, __openat_2, (int, const char *, int)) \
    X(int, __openat64_2, (int, const char *, int)) \
    X(int, creat, (const char *, mode_t)) \
    X(int, creat64, (const char *, mode_t)) \
    X(FILE *, fopen, (const char *, const char *)) \
    X(FILE *, fopen64, (const char *, const char *)) \
    X(FILE *, freopen, (const char *, const char *, FILE *)) \
    X(FILE *, freopen64, (const char *, const char *, FILE *)) \
    X(int, stat, (const char *, struct stat *)) \
    X(int, stat64, (const char *, struct stat64 *)) \
    X(int, lstat, (const char *, struct stat *)) \
    X(int, lstat64, (const char *, struct stat64 *)) \
    X(int, fstat, (int, struct stat *)) \
    X(int, fstat64, (int, struct stat64 *)) \
    X(int, fstatat, (int, const char *, struct stat *, int)) \
    X(int, fstatat64, (int, const char *, struct stat64 *, int)) \
    X(int, statx, (int, const char *, int, unsigned, struct statx *)) \
    X(int, __xstat, (int, const char *, struct stat *)) \
    X(int, __xstat64, (int, const char *, struct stat64 *)) \
    X(int, __lxstat, (int, const char *, struct stat *)) \
    X(int, __lxstat64, (int, const char *, struct stat64 *)) \
    X(int, __fxstat, (int, int, struct stat *)) \
    X(int, __fxstat64, (int, int, struct stat64 *)) \
    X(int, __fxstatat, (int, int, const char *, struct stat *, int)) \
    X(int, __fxstatat64, (int, int, const char *, struct stat64 *, int)) \
    X(int, access, (const char *, int)) \
    X(int, faccessat, (int, const char *, int, int)) \
    X(int, euidaccess, (const char *, int)) \
    X(int, eaccess, (const char *, int)) \
    X(DIR *, opendir, (const char *)) \
    X(DIR *, fdopendir, (int)) \
    X(struct dirent *, readdir, (DIR *)) \
    X(struct dirent64 *, readdir64, (DIR *)) \
    X(int, readdir_r, (DIR *, struct dirent *, struct dirent **)) \
    X(int, readdir64_r, (DIR *, struct dirent64 *, struct dirent64 **)) \
    X(void, rewinddir, (DIR *)) \
    X(void, seekdir, (DIR *, long)) \
    X(long, telldir, (DIR *)) \
    X(int, dirfd, (DIR *)) \
    X(int, closedir, (DIR *)) \
    X(int, scandir, (const char *, struct dirent ***, int (*)(const struct dirent *), \
                     int (*)(const struct dirent **, const struct dirent **))) \
    X(int, scandir64, (const char *, struct dirent64 ***, int (*)(const struct dirent64 *), \
                       int (*)(const struct dirent64 **, const struct dirent64 **))) \
    X(int, scandirat, (int, const char *, struct dirent ***, int (*)(const struct dirent *), \
                       int (*)(const struct dirent **, const struct dirent **))) \
    X(int, scandirat64, (int, const char *, struct dirent64 ***, int (*)(const struct dirent64 *), \
                         int (*)(const struct dirent64 **, const struct dirent64 **))) \
    X(int, glob, (const char *, int, int (*)(const char *, int), glob_t *)) \
    X(int, glob64, (const char *, int, int (*)(const char *, int), glob64_t *)) \
    X(char *, realpath, (const char *, char *)) \
    X(char *, __realpath_chk, (const char *, char *, size_t)) \
    X(char *, canonicalize_file_name, (const char *)) \
    X(ssize_t, readlink, (const char *, char *, size_t)) \
    X(ssize_t, readlinkat, (int, const char *, char *, size_t)) \
    X(int, chdir, (const char *)) \
    X(int, fchdir, (int)) \
    X(char *, getcwd, (char *, size_t)) \
    X(char *, get_current_dir_name, (void)) \
    X(ssize_t, getxattr, (const char *, const char *, void *, size_t)) \
    X(ssize_t, lgetxattr, (const char *, const char *, void *, size_t)) \
    X(ssize_t, fgetxattr, (int, const char *, void *, size_t)) \
    X(ssize_t, listxattr, (const char *, char *, size_t)) \
    X(ssize_t, llistxattr, (const char *, char *, size_t)) \
    X(ssize_t, flistxattr, (int, char *, size_t)) \
    X(int, setxattr, (const char *, const char *, const void *, size_t, int)) \
    X(int, lsetxattr, (const char *, const char *, const void *, size_t, int)) \
    X(int, fsetxattr, (int, const char *, const void *, size_t, int)) \
    X(int, removexattr, (const char *, const char *)) \
    X(int, lremovexattr, (const char *, const char *)) \
    X(int, fremovexattr, (int, const char *)) \
    X(int, statfs, (const char *, struct statfs *)) \
    X(int, statfs64, (const char *, struct statfs64 *)) \
    X(int, fstatfs, (int, struct statfs *)) \
    X(int, fstatfs64, (int, struct statfs64 *)) \
    X(int, statvfs, (const char *, struct statvfs *)) \
    X(int, statvfs64, (const char *, struct statvfs64 *)) \
    X(int, fstatvfs, (int, struct statvfs *)) \
    X(int, fstatvfs64, (int, struct statvfs64 *)) \
    X(int, close, (int)) \
    X(int, dup, (int)) \
    X(int, dup2, (int, int)) \
    X(int, dup3, (int, int, int)) \
    X(int, fcntl, (int, int, ...)) \
    X(int, fcntl64, (int, int, ...)) \
    X(int, close_range, (unsigned, unsigned, int)) \
    X(int, fclose, (FILE *)) \
    X(pid_t, fork, (void)) \
    X(void, _exit, (int)) \
    X(int, mkdir, (const char *, mode_t)) \
    X(int, mkdirat, (int, const char *, mode_t)) \
    X(int, rmdir, (const char *)) \
    X(int, unlink, (const char *)) \
    X(int, unlinkat, (int, const char *, int)) \
    X(int, rename, (const char *, const char *)) \
    X(int, renameat, (int, const char *, int, const char *)) \
    X(int, renameat2, (int, const char *, int, const char *, unsigned)) \
    X(int, link, (const char *, const char *)) \
    X(int, linkat, (int, const char *, int, const char *, int)) \
    X(int, symlink, (const char *, const char *)) \
    X(int, symlinkat, (const char *, int, const char *)) \
    X(int, chmod, (const char *, mode_t)) \
    X(int, fchmod, (int, mode_t)) \
    X(int, fchmodat, (int, const char *, mode_t, int)) \
    X(int, chown, (const char *, uid_t, gid_t)) \
    X(int, lchown, (const char *, uid_t, gid_t)) \
    X(int, fchown, (int, uid_t, gid_t)) \
    X(int, fchownat, (int, const char *, uid_t, gid_t, int)) \
    X(int, truncate, (const char *, off_t)) \
    X(int, truncate64, (const char *, off64_t)) \
    X(int, utime, (const char *, const struct utimbuf *)) \
    X(int, utimes, (const char *, const struct timeval *)) \
    X(int, lutimes, (const char *, const struct timeval *)) \
    X(int, futimesat, (int, const char *, const struct timeval *)) \
    X(int, utimensat, (int, const char *, const struct timespec *, int)) \
    X(int, futimens, (int, const struct timespec *)) \
    X(int, mknod, (const char *, mode_t, dev_t)) \
    X(int, mknodat, (int, const char *, mode_t, dev_t)) \
    X(int, mkfifo, (const char *, mode_t)) \
    X(int, mkfifoat, (int, const char *, mode_t)) \
    X(ssize_t, read, (int, void *, size_t)) \
    X(ssize_t, pread, (int, void *, size_t, off_t)) \
    X(ssize_t, pread64, (int, void *, size_t, off64_t)) \
    X(ssize_t, readv, (int, const struct iovec *, int)) \
    X(ssize_t, preadv, (int, const struct iovec *, int, off_t)) \
    X(ssize_t, preadv64, (int, const struct iovec *, int, off64_t)) \
    X(ssize_t, preadv2, (int, const struct iovec *, int, off_t, int)) \
    X(ssize_t, preadv64v2, (int, const struct iovec *, int, off64_t, int)) \
    X(off_t, lseek, (int, off_t, int)) \
    X(off64_t, lseek64, (int, off64_t, int)) \
    X(int, posix_fadvise, (int, off_t, off_t, int)) \
    X(int, posix_fadvise64, (int, off64_t, off64_t, int)) \
    X(ssize_t, readahead, (int, off64_t, size_t)) \
    X(ssize_t, sendfile, (int, int, off_t *, size_t)) \
    X(ssize_t, sendfile64, (int, int, off64_t *, size_t)) \
    X(ssize_t, copy_file_range, (int, off64_t *, int, off64_t *, size_t, unsigned)) \
    X(ssize_t, splice, (int, off64_t *, int, off64_t *, size_t, unsigned)) \
    X(void *, mmap, (void *, size_t, int, int, int, off_t)) \
    X(void *, mmap64, (void *, size_t, int, int, int, off64_t)) \
    X(FILE *, fdopen, (int, const char *)) \
    X(int, execve, (const char *, char *const[], char *const[])) \
    X(int, execv, (const char *, char *const[])) \
    X(int, execvp, (const char *, char *const[])) \
    X(int, execvpe, (const char *, char *const[], char *const[])) \
    X(int, fexecve, (int, char *const[], char *const[])) \
    X(int, posix_spawn, (pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *, \
                         char *const[], char *const[])) \
    X(int, posix_spawnp, (pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *, \
                          char *const[], char *const[])) \
    X(int, system, (const char *)) \
    X(FILE *, popen, (const char *, const char *))

#define FS_REAL_TYPEDEF(ret, name, params) typedef ret (*fs_real_##name##_fn) params;
FS_REAL_FUNCTIONS(FS_REAL_TYPEDEF)
#undef FS_REAL_TYPEDEF

#define FS_REAL_DECLARE(ret, name, params) \
    extern fs_real_##name##_fn fs_real_##name##_ptr; \
    fs_real_##name##_fn fs_real_##name##_resolve(void);
FS_REAL_FUNCTIONS(FS_REAL_DECLARE)
#undef FS_REAL_DECLARE

/* REAL(open) is the next definition of open after the shim's; NULL only during a nested resolution. */
#define REAL(name) \
    (__atomic_load_n(&fs_real_##name##_ptr, __ATOMIC_ACQUIRE) ? fs_real_##name##_ptr : fs_real_##name##_resolve())

/* Calls REAL(name)(args) or fails with errno ENOSYS (value err) when the symbol is unavailable. */
#define CALL_REAL(err, name, ...) \
    ({ fs_real_##name##_fn fs__f = REAL(name); \
       fs__f ? fs__f(__VA_ARGS__) : (errno = ENOSYS, (err)); })

#endif
