#!/usr/bin/python3
"""The documentation walk-through: runs every command block of the given Markdown files, as a newcomer would
type them, and checks that each command succeeds and prints what the page shows.

A command block is a fenced block whose info string starts with `console`. In it, a line starting with `$ ` is a
command (a line ending in a backslash continues it); the lines after a command, up to the next one, are what it
must print (stdout and stderr together): each must match an output line, in the order shown, and `...` inside a
line matches any text. Lines the page leaves out may appear in between. A command must exit 0 unless the page
shows its status (`cmd; echo "exit $?"`).

Each file runs in order in one fresh session: the repository root as working directory, TMPDIR a directory of
its own (removed at the end, with any test SLURM cluster or S3Proxy started under it), and what one command
exports or its `cd` carried to the next. A block tagged `console setup` (the README's two set-up commands, which CI itself runs)
is only checked: each command's program must exist and be executable. Any other fenced block holding `$ ` lines,
or tagged sh/bash/shell, is an error: every command on the pages is run.

usage: walkthrough.py FILE.md...    (exit 0: every command as documented; 1: a mismatch, shown; 2: usage)
"""
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMAND_SECONDS = 180


class Command:
    def __init__(self, path, line, text, expected):
        self.path, self.line, self.text, self.expected = path, line, text, expected


def blocks(path):
    """Yields (info, first line number, lines) for every fenced block of a Markdown file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)(```+|~~~+)(.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group(1), m.group(2), m.group(3).strip()
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        i += 1
        yield info, start + 1, body


def commands(path, body, first_line):
    out, cur = [], None
    k = 0
    while k < len(body):
        line = body[k]
        if line.startswith("$ "):
            text, at = line[2:], first_line + k
            while text.endswith("\\") and k + 1 < len(body):
                k += 1
                text = text + "\n" + body[k]  # kept as typed: bash joins the lines
            cur = Command(path, at, text, [])
            out.append(cur)
        elif cur is not None and line.strip():
            cur.expected.append(line.rstrip())
        k += 1
    return out


def pattern(expected):
    return re.compile(".*".join(re.escape(p) for p in expected.strip().split("...")))


def mismatch(expected, output):
    """The first expected line not found in order, or None."""
    got = [line.rstrip() for line in output.split("\n")]
    at = 0
    for want in expected:
        if want.strip() == "...":
            continue
        p = pattern(want)
        while at < len(got) and not p.fullmatch(got[at].strip()):
            at += 1
        if at == len(got):
            return want
        at += 1
    return None


def run(cmd, state):
    script = (f'. {state}/env && cd "$(cat {state}/cwd)"\n{cmd.text}\n__rc=$?\n'
              f'export -p > {state}/env; pwd > {state}/cwd; exit $__rc\n')
    p = subprocess.Popen(["bash", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, start_new_session=True, text=True)
    try:
        out, _ = p.communicate(timeout=COMMAND_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return None, out
    return p.returncode, out


def stop_servers(sandbox):
    """Stops what the page's commands started under the sandbox, whichever command failed: test SLURM clusters and
    S3Proxy servers (a page stops its own when it runs to the end)."""
    for root, _, names in os.walk(sandbox):
        if "slurm.conf" in names and "slurmctld.pid" in names:
            subprocess.run([os.path.join(REPO, "tests/slurm/cluster.sh"), "stop", root], timeout=120)
        if "s3proxy.pid" in names:
            subprocess.run([os.path.join(REPO, "tests/s3/s3proxy.sh"), "stop", root], timeout=30)


def walk(path):
    """Runs one file; returns (commands run, error text or None)."""
    sandbox = tempfile.mkdtemp(prefix="walkthrough-")
    state = os.path.join(sandbox, ".state")
    os.mkdir(state)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("FANSTORE_", "SLURM_", "OMPI_", "PMI_")) and k not in ("PWD", "OLDPWD")}
    env["TMPDIR"] = sandbox
    with open(os.path.join(state, "env"), "w") as f:
        f.writelines(f"export {k}={shlex.quote(v)}\n" for k, v in env.items() if re.fullmatch(r"\w+", k))
    with open(os.path.join(state, "cwd"), "w") as f:
        f.write(REPO + "\n")
    ran = 0
    try:
        for info, line, body in blocks(path):
            tags = info.split()
            lang = tags[0] if tags else ""
            has_prompts = any(b.startswith("$ ") for b in body)
            if lang != "console":
                if lang in ("sh", "bash", "shell") or has_prompts:
                    return ran, f"{path}:{line}: a command block must be tagged `console` so it is run"
                continue
            for cmd in commands(path, body, line):
                where = f"{path}:{cmd.line}: $ {cmd.text}"
                if "setup" in tags[1:]:
                    prog = os.path.join(REPO, shlex.split(cmd.text, comments=True)[0])
                    if not (os.path.isfile(prog) and os.access(prog, os.X_OK)):
                        return ran, f"{where}\n  {prog} is not an executable file"
                    print(f"checked {where}", flush=True)
                    continue
                t0 = time.monotonic()
                rc, out = run(cmd, state)
                ran += 1
                dt = time.monotonic() - t0
                if rc is None:
                    return ran, f"{where}\n  still running after {COMMAND_SECONDS} s; it printed:\n{out}"
                if rc != 0:
                    return ran, f"{where}\n  exited {rc}; it printed:\n{out}"
                missing = mismatch(cmd.expected, out)
                if missing is not None:
                    return ran, f"{where}\n  the page shows a line it did not print:\n    {missing}\n  it printed:\n{out}"
                print(f"ok {dt:5.1f} s  {where.splitlines()[0]}", flush=True)
        return ran, None
    finally:
        stop_servers(sandbox)
        shutil.rmtree(sandbox, ignore_errors=True)


def main(paths):
    if not paths:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    total = 0
    for path in paths:
        ran, error = walk(os.path.join(REPO, path) if not os.path.isabs(path) else path)
        total += ran
        if error:
            print(f"walkthrough: FAILED at {error}", file=sys.stderr)
            return 1
    print(f"walkthrough: {total} commands in {len(paths)} files, each as documented")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
