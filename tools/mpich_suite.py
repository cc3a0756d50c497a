#!/usr/bin/env python3
"""Run MPICH's own test suite (test/mpi of Debian's mpich source package,
the version of the installed MPICH) against oxmpi: an outside check of
what the standard asks, written by others.

  tools/mpich_suite.py [--swap] [--dirs coll,pt2pt,...] [--jobs 2]

Without --swap the suite is built with oxmpi's mpicc, mpif77 and
mpif90 (configure --with-mpi=build; the f90 tests use the mpi module);
with --swap, with Debian's mpicc.mpich, mpif77.mpich and mpif90.mpich
(and MPICH's module), and run on oxmpi through the library swap
(LD_LIBRARY_PATH=build/lib). Each entry of a directory's testlist runs
under oxmpi's mpiexec with its rank count and arguments, and passes when
it exits 0 and prints "No Errors" (an entry with resultTest=TestStatus or
TestErrFatal: when it exits non-zero, as the program means to).

The failures oxmpi expects, each with its reason, are listed in
tools/mpich_suite_known.txt; the script ends with "N passed, M known
failures, K unexpected" and exits 1 on an unexpected failure or on a
known one that passes now (so the list stays true; an entry whose reason
starts with "(may pass)" may do either).

Not part of `make test`: it downloads the source package (apt-get source,
through a private apt state under build/mpich-suite whose deb-src lines
are the system's Debian sources), builds about 700 programs, and runs
for about 15 minutes on the 2-core test machine. Needs `make build`.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import time

import known_failures

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
WORK = os.path.join(BUILD, "mpich-suite")
KNOWN = os.path.join(ROOT, "tools", "mpich_suite_known.txt")
DIRS = ["attr", "coll", "comm", "datatype", "errhan", "group", "info", "init", "pt2pt", "topo",
        "f77/attr", "f77/coll", "f77/comm", "f77/datatype", "f77/ext", "f77/info", "f77/init", "f77/pt2pt",
        "f77/profile", "f77/topo", "f90/attr", "f90/coll", "f90/comm", "f90/datatype", "f90/ext", "f90/f90types",
        "f90/info", "f90/init", "f90/misc", "f90/profile", "f90/pt2pt", "f90/timer", "f90/topo"]
TIMEOUT = 180


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def fetch():
    """The suite's directory, test/mpi, downloaded and unpacked once."""
    version = subprocess.run(["dpkg-query", "-W", "-f=${source:Version}", "libmpich-dev"], capture_output=True,
                             text=True, check=True).stdout.strip()
    upstream = version.split("-")[0]
    tree = os.path.join(WORK, f"mpich-{upstream}")
    if os.path.isdir(os.path.join(tree, "test", "mpi")):
        return os.path.join(tree, "test", "mpi")
    apt = os.path.join(WORK, "apt")
    for d in ("parts", "lists/partial", "cache/archives/partial"):
        os.makedirs(os.path.join(apt, d), exist_ok=True)
    # the system's Debian sources, as deb-src (deb822 files and one-line lists)
    with open(os.path.join(apt, "parts", "src.sources"), "w") as out:
        for f in glob.glob("/etc/apt/sources.list.d/*.sources"):
            out.write(re.sub(r"(?m)^Types: deb$", "Types: deb-src", open(f).read()) + "\n")
    with open(os.path.join(apt, "parts", "src.list"), "w") as out:
        for f in glob.glob("/etc/apt/sources.list") + glob.glob("/etc/apt/sources.list.d/*.list"):
            out.writelines(re.sub(r"^deb ", "deb-src ", l) for l in open(f) if l.startswith("deb "))
    opts = ["-o", "Dir::Etc::SourceList=/dev/null", "-o", f"Dir::Etc::SourceParts={apt}/parts",
            "-o", f"Dir::State::Lists={apt}/lists", "-o", f"Dir::Cache={apt}/cache", "-o", "APT::Sandbox::User=root",
            "-qq"]
    run(["apt-get"] + opts + ["update"])
    run(["apt-get"] + opts + ["source", "--download-only", f"mpich={version}"], cwd=WORK)
    run(["tar", "xJf", f"mpich_{upstream}.orig.tar.xz", f"mpich-{upstream}/test/mpi"], cwd=WORK)
    return os.path.join(tree, "test", "mpi")


def configure(src, swap):
    """A configured copy of the suite for oxmpi's compilers or MPICH's."""
    tree = os.path.join(WORK, "mpich" if swap else "oxmpi")
    args = ["./configure", "--enable-strictmpi", "--disable-cxx", "--enable-fortran=f77,f90", "--disable-romio",
            "--disable-spawn", "--disable-rma", "--disable-part", "--disable-dtpools", "--disable-ft-tests"]
    # (a tree configured with other arguments, by an older version of
    # this script, is configured again)
    mark, base = os.path.join(tree, "oxmpi-configure"), " ".join(args)
    if not os.path.exists(mark) or open(mark).read() != base:
        run(["rm", "-rf", tree])
        run(["cp", "-a", src, tree])  # -a: timestamps kept, or make would rerun automake
        if swap:
            args += ["CC=mpicc.mpich", "F77=mpif77.mpich", "FC=mpif90.mpich"]
            env = dict(os.environ, MPICC="mpicc.mpich", MPIF77="mpif77.mpich", MPIFC="mpif90.mpich")
        else:
            args += [f"--with-mpi={BUILD}"]
            env = os.environ
        run(args, cwd=tree, env=env, stdout=subprocess.DEVNULL)
        run(["make", "-C", "util"], cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        open(mark, "w").write(base)
    return tree


def entries(d):
    """(name, ranks, args, env, expect_failure, seconds allowed) of a
    testlist (three times its timeLimit, when it has one)."""
    for line in open(os.path.join(d, "testlist")):
        f = line.split()
        if len(f) < 2 or f[0].startswith("#") or not f[1].isdigit():
            continue
        args, env, fails, limit = [], {}, False, TIMEOUT
        for kv in f[2:]:
            k, _, v = kv.partition("=")
            if k == "timeLimit":
                # (MPICH's runtests also hands the limit to mpiexec)
                limit = min(TIMEOUT, 3 * int(v))
                env["MPIEXEC_TIMEOUT"] = v
            elif k == "arg":
                args.append(v)
            elif k == "env":
                name, _, value = v.partition("=")
                env[name] = value
            elif k == "resultTest" and v in ("TestStatus", "TestErrFatal"):
                fails = True
        yield f[0], int(f[1]), args, env, fails, limit


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--swap", action="store_true", help="build with MPICH's compilers, run through the swap")
    ap.add_argument("--dirs", default=",".join(DIRS), help="test directories, comma-separated")
    ap.add_argument("--jobs", default="2", help="make -j")
    a = ap.parse_args()
    tree = configure(fetch(), a.swap)
    tally = known_failures.Tally(known_failures.load(KNOWN))
    mpiexec = os.path.join(BUILD, "bin", "mpiexec")
    env0 = dict(os.environ)
    if a.swap:
        env0["LD_LIBRARY_PATH"] = os.path.join(BUILD, "lib")
    for d in a.dirs.split(","):
        path = os.path.join(tree, d)
        subprocess.run(["make", "-k", f"-j{a.jobs}"], cwd=path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for name, n, args, env, fails, limit in entries(path):
            key = f"{d}/{name}"
            t = time.time()
            exe = os.path.join(path, name)
            if not os.path.exists(exe):
                # (a program make all leaves out, as MPICH's runtests builds
                # every program of a testlist by name)
                subprocess.run(["make", name], cwd=path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if not os.path.exists(exe):
                ok, why = False, "not built (a function oxmpi does not export?)"
            else:
                try:
                    r = subprocess.run([mpiexec, "-n", str(n), exe] + args, cwd=path, capture_output=True, text=True,
                                       timeout=limit, env=dict(env0, **env))
                    out = r.stdout + r.stderr
                    ok = r.returncode != 0 if fails else r.returncode == 0 and "No Errors" in out
                    why = " | ".join(out.strip().splitlines()[:3])
                except subprocess.TimeoutExpired:
                    ok, why = False, f"no end after {limit} s"
            tally.add(key, ok, why, f"{key} -n {n} {' '.join(args)}".strip(), time.time() - t)
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
