# Run under the shim inside `fanstore run`. "attack": for every file under $FANSTORE_MOUNT/ds, open it, then try
# to reach its backing file for writing through the names the kernel gives its descriptor; a write that gets
# through scribbles on the file, so the "read" pass (a later process) sees the damage. Prints one line per check.
import errno
import hashlib
import os
import sys

mount = os.environ["FANSTORE_MOUNT"]
root = os.path.join(mount, "ds")
WRITES = {"O_WRONLY": os.O_WRONLY, "O_RDWR": os.O_RDWR, "O_WRONLY|O_APPEND": os.O_WRONLY | os.O_APPEND,
          "O_RDONLY|O_TRUNC": os.O_RDONLY | os.O_TRUNC}


def files():
    for dirpath, _dirs, names in os.walk(root):
        for name in sorted(names):
            path = os.path.join(dirpath, name)
            yield path, os.path.relpath(path, mount)


def attack(path, rel):
    fd = os.open(path, os.O_RDONLY)
    aliases = ["/proc/self/fd/%d" % fd, "/dev/fd/%d" % fd, "/proc/%d/fd/%d" % (os.getpid(), fd)]
    print("MODE %s %o" % (rel, os.stat(aliases[0]).st_mode & 0o7777))
    for alias in aliases:
        os.close(os.open(alias, os.O_RDONLY))  # reading by that name stays allowed
        for label, flags in WRITES.items():
            try:
                wfd = os.open(alias, flags)
            except OSError as e:
                print("REFUSED %s %s %s %s" % (rel, alias.split("/")[1], label, errno.errorcode[e.errno]))
                continue
            os.write(wfd, b"CORRUPTED")
            os.close(wfd)
            print("WRITABLE %s %s %s" % (rel, alias, label))
        try:
            os.truncate(alias, 0)
            print("WRITABLE %s %s truncate" % (rel, alias))
        except OSError as e:
            print("REFUSED %s %s truncate %s" % (rel, alias.split("/")[1], errno.errorcode[e.errno]))
    os.close(fd)


def read(path, rel):
    with open(path, "rb") as f:
        body = f.read()
    print("HASH %s %s %d" % (rel, hashlib.sha256(body).hexdigest(), len(body)))


for path, rel in files():
    (attack if sys.argv[1] == "attack" else read)(path, rel)
