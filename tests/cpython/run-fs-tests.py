#!/usr/bin/env python3
"""CPython's own file-system tests, natively and under the mount: none that passes natively may fail under it.

Runs `/usr/bin/python3 -m test` on test_os, test_shutil, test_tempfile, test_glob, test_pathlib, test_fileio and
test_posixpath twice: natively with TMPDIR on this machine's disk, then as the command of
`fanstore run --ranks 1 --data <tiny dataset> --output-dir ...` with TMPDIR=/fanstore/ds/tmp (regrtest works in a
directory under TMPDIR, so every test's files and its working directory are under the mount). Compares the JUnit
results test by test and prints each test that passes natively but fails (or errors) under the mount, then
`N passed, M failed`: N tests that pass natively and under the mount, M regressions. Exit status 0 iff M == 0.

Usage: tests/cpython/run-fs-tests.py [--keep] [--module test_os ...]
  --keep    keep the work directory (kept anyway when something regressed): native.log, mount.log, *.xml
  --module  run only these modules (repeatable)
Needs Debian's libpython3.11-testsuite (scripts/setup-debian.sh installs it) and a built fanstore. About 30 s
(CPythonFsTestsTest runs it in the suite).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = "/usr/bin/python3"
MODULES = ["test_os", "test_shutil", "test_tempfile", "test_glob", "test_pathlib", "test_fileio", "test_posixpath"]


def regrtest(xml, modules):
    return [PYTHON, "-m", "test", "--junit-xml", xml] + modules


def results(xml):
    """test id -> 'pass' | 'fail' | 'skip' from a regrtest JUnit file."""
    out = {}
    if not os.path.exists(xml):
        return out
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = case.get("name")
        if not name:
            continue
        kids = {c.tag for c in case}
        if "failure" in kids or "error" in kids:
            out[name] = "fail"
        elif "skipped" in kids:
            out[name] = "skip"
        else:
            out[name] = "pass"
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--module", dest="modules", action="append")
    a = ap.parse_args()
    modules = a.modules or MODULES
    testdir = "/usr/lib/python3.11/test"
    missing = [m for m in modules if not os.path.exists(os.path.join(testdir, m + ".py"))]
    if missing:
        print(f"run-fs-tests: {testdir} lacks {' '.join(missing)}: install libpython3.11-testsuite", file=sys.stderr)
        return 2
    fanstore = os.path.join(REPO, "fanstore")
    work = tempfile.mkdtemp(prefix="fs-cpython-", dir="/tmp")
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "FANSTORE_"))}
        env.pop("LD_PRELOAD", None)
        # native: TMPDIR on the disk
        ntmp = os.path.join(work, "native-tmp")
        os.makedirs(ntmp)
        nxml = os.path.join(work, "native.xml")
        t0 = time.monotonic()
        subprocess.run(regrtest(nxml, modules), env=dict(env, TMPDIR=ntmp), cwd=work,
                       stdout=open(os.path.join(work, "native.log"), "w"), stderr=subprocess.STDOUT)
        t1 = time.monotonic()
        # under the mount: a tiny dataset, the tests' TMPDIR under /fanstore/ds/tmp
        src = os.path.join(work, "src")
        os.makedirs(src)
        with open(os.path.join(src, "a.txt"), "w") as f:
            f.write("hello\n")
        data = os.path.join(work, "data.fs")
        subprocess.run([fanstore, "prep", "--input", src, "--output", data, "--name", "ds"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        local = os.path.join(work, "local")
        saved = os.path.join(work, "saved")
        os.makedirs(local)
        os.makedirs(saved)
        mxml = os.path.join(work, "mount.xml")
        inner = ("mkdir -p /fanstore/ds/tmp && cd /fanstore/ds/tmp && TMPDIR=/fanstore/ds/tmp exec \"$@\"")
        job = "cp" + format(time.time_ns() % 1_000_000_000, "x")  # short: socket paths under the mount
        mlog = os.path.join(work, "mount.log")
        subprocess.run([fanstore, "run", "--ranks", "1", "--local-dir", local, "--output-dir", saved, "--data", data,
                        "--", "/bin/sh", "-c", inner, "sh"] + regrtest(mxml, modules),
                       env=dict(env, FANSTORE_JOB_ID=job), cwd=work, stdout=open(mlog, "w"),
                       stderr=subprocess.STDOUT)
        t2 = time.monotonic()
        native, mount = results(nxml), results(mxml)
        if not native or not mount:
            print(f"run-fs-tests: no results ({'native' if not native else 'mount'}); logs in {work}")
            a.keep = True
            print("0 passed, 1 failed")
            return 1
        regressions = sorted(t for t, r in native.items() if r == "pass" and mount.get(t) != "pass")
        passed = sum(1 for t, r in native.items() if r == "pass" and mount.get(t) == "pass")
        for t in regressions:
            print(f"REGRESSION {t}: {mount.get(t, 'not run')} under the mount")
        print(f"run-fs-tests: {len(native)} tests; native {t1 - t0:.0f} s, under the mount {t2 - t1:.0f} s"
              + (f"; logs in {work}" if a.keep or regressions else ""))
        if regressions:
            a.keep = True
        print(f"{passed} passed, {len(regressions)} failed")
        return 0 if not regressions else 1
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
