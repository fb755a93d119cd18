#!/bin/bash
# Writes under the mount with real programs, run INSIDE a job: fanstore run --ranks 1 --data D.fs -- bash this.
# The dataset must hold a.txt ("hello") and d/b.txt ("x") under the name in $1 (WritesTest preps it). Prints one
# PASS/FAIL line per check and "N passed, M failed"; exits non-zero on any failure.
M="$FANSTORE_MOUNT/$1"
PY=/usr/bin/python3
pass=0; failed=0
check() {  # check LABEL EXPECTED ACTUAL
    if [ "$2" == "$3" ]; then echo "PASS $1"; pass=$((pass + 1));
    else printf 'FAIL %s\n  expected: %q\n  actual:   %q\n' "$1" "$2" "$3"; failed=$((failed + 1)); fi
}

echo one > "$M/f1"; echo two >> "$M/f1"
check "shell > then >>" "$(printf 'one\ntwo')" "$(cat "$M/f1")"
check "ls shows inputs and outputs together" "a.txt d f1" "$(ls "$M" | tr '\n' ' ' | sed 's/ $//')"

mkdir -p "$M/out/x/y"
check "mkdir -p" "d" "$(stat -c %F "$M/out/x/y" | cut -c1)"
check "mkdir of an existing directory" "1" "$(mkdir "$M/out" 2>/dev/null; echo $?)"
echo hi > "$M/out/x/y/z"; mv "$M/out/x/y/z" "$M/out/zz"
check "mv of an output" "hi|no" "$(cat "$M/out/zz")|$([ -e "$M/out/x/y/z" ] && echo yes || echo no)"
rm "$M/out/zz"; rmdir "$M/out/x/y"
check "rm and rmdir of outputs" "x" "$(ls "$M/out" | tr '\n' ' ' | sed 's/ $//')"
check "rmdir of a non-empty output directory" "1" "$(rmdir "$M/out" 2>/dev/null; echo $?)"

check "write to an input" "Read-only file system" "$( (echo bad > "$M/a.txt") 2>&1 | sed 's/.*: //')"
check "truncate of an input" "1" "$(truncate -s 0 "$M/a.txt" 2>/dev/null; echo $?)"
check "rm of an input" "1" "$(rm -f "$M/a.txt" 2>/dev/null; echo $?)"
check "mv of an input" "1" "$(mv "$M/a.txt" "$M/moved" 2>/dev/null; echo $?)"
check "input unchanged" "hello" "$(cat "$M/a.txt")"

TMPDIR_W="$(mktemp -d)"; tar -C "$(dirname "$0")" -cf "$TMPDIR_W/arch.tar" e2e_writes.sh
mkdir "$M/untar" && (cd "$M/untar" && tar xf "$TMPDIR_W/arch.tar")
check "tar xf into the mount" "ok" "$(cmp -s "$M/untar/e2e_writes.sh" "$(dirname "$0")/e2e_writes.sh" && echo ok)"
check "find in an output directory" "$M/untar/e2e_writes.sh" "$(find "$M/untar" -type f)"

out="$("$PY" - "$M" <<'PYEOF' 2>&1
import os, sys, errno, shutil, subprocess, tempfile, time
M = sys.argv[1]
def say(label, value):
    print(label + "=" + str(value))
import numpy as np
np.save(M + "/a.npy", np.arange(10))
say("np", np.load(M + "/a.npy").sum())
fd, tmp = tempfile.mkstemp(dir=M + "/out")
os.write(fd, b"ckpt"); os.fsync(fd); os.close(fd)
os.replace(tmp, M + "/out/ckpt")
say("replace", open(M + "/out/ckpt").read() + ":" + str(os.path.exists(tmp)))
shutil.copy(M + "/a.txt", M + "/out/copy.txt")
say("copy", open(M + "/out/copy.txt").read().strip())
try:
    import torch
    torch.save({"w": torch.arange(5)}, M + "/out/m.pt")
    say("torch", torch.load(M + "/out/m.pt")["w"].tolist())
except ImportError:
    say("torch", "missing")
f = open(M + "/out/pending", "w"); f.write("x"); f.flush()
before = subprocess.run(["stat", "-c%s", M + "/out/pending"], capture_output=True).returncode
f.close()
after = subprocess.run(["stat", "-c%s", M + "/out/pending"], capture_output=True, text=True).stdout.strip()
say("visibility", str(before) + "/" + after)
fd = os.open(M + "/out/forked", os.O_WRONLY | os.O_CREAT); d = os.dup(fd)
pid = os.fork()
if pid == 0:
    time.sleep(1); os.write(d, b"child"); os.close(d); os.close(fd); os._exit(0)
os.close(fd); os.close(d)
hidden = os.path.exists(M + "/out/forked")
os.waitpid(pid, 0)
say("fork", str(hidden) + ":" + open(M + "/out/forked").read())
p = subprocess.Popen([sys.executable, "-c",
    "import time; f = open('" + M + "/out/killed', 'w'); f.write('half'); f.flush(); print('w', flush=True); time.sleep(60)"],
    stdout=subprocess.PIPE)
p.stdout.readline(); p.kill(); p.wait()
say("killed", open(M + "/out/killed").read())
try:
    os.open(M + "/a.txt", os.O_RDWR)
except OSError as e:
    say("input_rdwr", errno.errorcode[e.errno])
try:
    os.rename(M + "/a.txt", M + "/out/x/a")
except OSError as e:
    say("input_rename", errno.errorcode[e.errno])
try:
    os.open(M + "/out/ckpt", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
except OSError as e:
    say("excl", errno.errorcode[e.errno])
PYEOF
)"
get() { echo "$out" | sed -n "s/^$1=//p"; }
check "np.save / np.load" "45" "$(get np)"
check "mkstemp + os.replace" "ckpt:False" "$(get replace)"
check "shutil.copy" "hello" "$(get copy)"
torch_result="$(get torch)"
[ "$torch_result" == "missing" ] && echo "SKIP torch (not installed for $PY)" || check "torch.save / torch.load" "[0, 1, 2, 3, 4]" "$torch_result"
check "visible by path from creation, as on a local disk (another process)" "0/1" "$(get visibility)"
check "dup + fork: the child's writes land in the file the parent made" "True:child" "$(get fork)"
check "kill -9 of the writer leaves what it wrote, as on a local disk" "half" "$(get killed)"
check "O_RDWR on an input" "EROFS" "$(get input_rdwr)"
check "rename of an input" "EROFS" "$(get input_rename)"
check "O_EXCL on a committed output" "EEXIST" "$(get excl)"
[ "$failed" -eq 0 ] || echo "$out"

echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
