# Run by CloseReportsRefusedPublishTest on 2 ranks (the command on each): rank 1 writes out/x (Python's close) and
# out/z (fopen/fclose through ctypes, the global scope, so the shim's fclose) while rank 0 makes directories of
# those names; their publishes are refused, and each close must fail. SYNC: a directory both ranks see.
import ctypes, errno, functools, os, sys

import e2e_flags

sync = sys.argv[1]
rank = os.environ['FANSTORE_RANK']
mark = functools.partial(e2e_flags.mark, sync)
wait = functools.partial(e2e_flags.wait, sync, rank=rank)
os.makedirs('/fanstore/out', exist_ok=True)
if rank == '1':
    f = open('/fanstore/out/x', 'w')
    f.write('refused\n')
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fopen.restype = ctypes.c_void_p
    libc.fputs.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    c = libc.fopen(b'/fanstore/out/z', b'w')
    libc.fputs(b'refused too\n', c)
    with open('/fanstore/out/kept', 'w') as k:
        k.write('kept\n')
    mark('opened')
    wait('made')
    try:
        f.close()
        print('rank 1 close ok', flush=True)
    except OSError as e:
        print('rank 1 close %s' % errno.errorcode.get(e.errno), flush=True)
    rc = libc.fclose(c)
    print('rank 1 fclose %d %s' % (rc, errno.errorcode.get(ctypes.get_errno())), flush=True)
else:
    wait('opened')
    os.mkdir('/fanstore/out/x')
    os.mkdir('/fanstore/out/z')
    with open('/fanstore/out/kept') as k:
        print('rank 0 read %s' % k.read().strip(), flush=True)
    mark('made')
