#!/usr/bin/env python3
"""Run ScaLAPACK's test suite, as Debian builds it against MPICH
(package scalapack-mpi-test), on oxmpi through the library swap: Fortran
and C programs built by others with MPICH's compilers, whose BLACS layer
makes and frees communicators for every process grid and moves
submatrices by derived datatypes, broadcasts and reductions (user
operators included).

  tools/scalapack_suite.py [--only xdlu,xFbtest,...] [--timeout 120]

Every test the package's CTest files list (the LU, QR, Cholesky, band,
eigenvalue, SVD and inverse drivers, the PBLAS testers and the two BLACS
testers; not PBLAS/TIMING, whose input files Debian does not ship) runs
under oxmpi's mpiexec with the rank count CTest gives it (4), with
LD_LIBRARY_PATH=build/lib, in a scratch directory holding the input
files. A test passes when it exits 0, reports its counts or verdicts,
and every count of failures is 0 ("N tests completed and failed", the
BLACS testers' "N FAILED.", the PBLAS summaries' FAILED column) and no
row's verdict FAILED (the drivers that print one a row). The BLACS
testers end by calling BLACS_ABORT on purpose: they pass when that ends
the job after all their counts are in.

The failures oxmpi expects, each with its reason, are listed in
tools/scalapack_suite_known.txt (as for tools/mpich_suite.py: a reason
starting with "(may pass)" lets the test pass too); the script ends with
"N passed, M known failures, K unexpected" and exits 1 on an unexpected
failure or on a known one that passes.

Not part of `make test`: it needs the package (apt-get install
scalapack-mpi-test, about 20 MB with its libraries) and runs for about
2 minutes here. Needs `make build`.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import known_failures

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
KNOWN = os.path.join(ROOT, "tools", "scalapack_suite_known.txt")
TESTS = "/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests"
DATA = "/usr/share/scalapack"
BLACS_TESTERS = ("xCbtest", "xFbtest")


def listed():
    """(name, program, ranks) of every test the CTest files list, but
    PBLAS/TIMING's."""
    tests = []
    for cmake in (os.path.join(TESTS, d, "CTestTestfile.cmake") for d in ("", "PBLAS", "BLACS")):
        here = os.path.dirname(cmake)
        for m in re.finditer(r'add_test\((\S+) "([^"]+)"(.*)\)', open(cmake).read()):
            name, args = m.group(1), re.findall(r'"([^"]*)"', m.group(3))
            ranks = int(args[args.index("-n") + 1]) if "-n" in args else 4
            tests.append((name, os.path.join(here, name), ranks))
    return tests


def verdict(name, code, out):
    """None when the run passed, else why not."""
    counts = 0
    for m in re.finditer(r"(\d+) tests completed and failed", out):
        counts += 1
        if int(m.group(1)):
            return m.group(0)
    for m in re.finditer(r"TESTS;.*?(\d+) FAILED\.", out):
        counts += 1
        if int(m.group(1)):
            return m.group(0).strip()
    for m in re.finditer(r"^\s*\|\s+(P\w+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", out, re.M):
        counts += 1
        if int(m.group(4)):
            return f"{m.group(1)}: {m.group(4)} failed"
    # the drivers that print a verdict a row and no count (SVD first,
    # HSEQR last, eigensolvers before the routine's name)
    for line in out.splitlines():
        words = line.split()
        if not words or "SKIPPED" in words:
            continue
        if "FAILED" in words[-3:] or words[0] in ("Failed", "FAILED"):
            return line.strip()
        if "PASSED" in words[-2:] or words[0] == "Passed":
            counts += 1
    if not counts:
        return f"exit {code}, no counts reported: {out.strip()[-300:]!r}"
    if name in BLACS_TESTERS:
        if "The final auxiliary test is for BLACS_ABORT" not in out or code == 0:
            return f"exit {code}: did not reach BLACS_ABORT"
        return None
    return None if code == 0 else f"exit {code}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated test names")
    ap.add_argument("--timeout", type=int, default=120)
    args = ap.parse_args()
    if not os.path.isdir(TESTS):
        sys.exit("scalapack_suite: ScaLAPACK's MPICH-built tests are not installed: apt-get install scalapack-mpi-test")
    tally = known_failures.Tally(known_failures.load(KNOWN))
    only = set(args.only.split(",")) if args.only else None
    work = tempfile.mkdtemp(prefix="oxmpi-scalapack-")
    for f in glob.glob(os.path.join(DATA, "*.dat")) + glob.glob(os.path.join(DATA, "*", "*.dat")):
        shutil.copy(f, work)
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(BUILD, "lib"))
    for name, program, ranks in listed():
        if only and name not in only:
            continue
        start = time.time()
        try:
            p = subprocess.run([os.path.join(BUILD, "bin", "mpiexec"), "-n", str(ranks), program], cwd=work, env=env,
                               capture_output=True, text=True, timeout=args.timeout)
            why = verdict(name, p.returncode, p.stdout + p.stderr)
        except subprocess.TimeoutExpired:
            why = f"no end in {args.timeout} s"
        tally.add(name, why is None, why, took=time.time() - start)
    shutil.rmtree(work)
    sys.exit(tally.summary())


if __name__ == "__main__":
    main()
