/* glibc_compat: pins the symbols glibc 2.34 re-versioned to their oldest versions, so that one libfanstore.so
 * built on a new glibc loads on every glibc from 2.17 up (CentOS 7's). Owns: the .symver directives only.
 * Force-included into every object of the shim by the Makefile (-include), so no source has to remember it.
 *
 * Why: glibc 2.34 merged libdl and libpthread into libc and gave the merged functions a new default version
 * (dlsym@@GLIBC_2.34, pthread_once@@GLIBC_2.34); a library linked against 2.34+ then asks for GLIBC_2.34 and an
 * older ld.so refuses to preload it. The old versions are still exported as compatibility symbols, so binding
 * to them works on every glibc. On a glibc before 2.34 those functions live in libdl.so.2 / libpthread.so.0:
 * the Makefile records both as NEEDED (they are empty stubs on 2.34+), and ld.so binds a versioned symbol from
 * whichever loaded object defines that version of it.
 * The list is what `objdump -T build/libfanstore.so` showed above GLIBC_2.17; `make check-glibc` fails the build
 * when anything else newer than 2.17 creeps in (a new libc call, a fortified __*_chk, an __isoc23_* redirect). */
#ifndef FS_GLIBC_COMPAT_H
#define FS_GLIBC_COMPAT_H

#if defined(__x86_64__) && !defined(__ILP32__)
#define FS_GLIBC_BASE "GLIBC_2.2.5"  /* the first x86_64 glibc */
#elif defined(__aarch64__)
#define FS_GLIBC_BASE "GLIBC_2.17"   /* the first aarch64 glibc */
#endif

#ifdef FS_GLIBC_BASE
__asm__(".symver dlsym,dlsym@" FS_GLIBC_BASE);
__asm__(".symver pthread_once,pthread_once@" FS_GLIBC_BASE);
#endif

#endif
