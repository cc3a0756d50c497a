#!/usr/bin/env python3
"""Build and run the C tests in c-tests/ under oxmpi's mpiexec.

Each test's first comment says how to run it:
  /* oxmpi-test: ranks=1,2,4 env=A=1 variants=B=0;B=0,C=2 expect=fail stderr="text|more" exit=N */
`env` applies to every run; `mpich=no` skips the MPICH-built runs (for
functions beyond MPICH 4's ABI); `tcp=no` skips the test where every run
goes over TCP (`--env OXMPI_TRANSPORT=tcp`: what it checks needs ranks
sharing memory); each variant (';'-separated, ','-joined
settings) is one more run per rank count.
A passing run exits 0, prints "No Errors" and no "check failed"; an expected failure exits
non-zero (N if given), promptly, with `text` (and each other '|'-separated
text) on stderr. After every run no
process of the test may remain and no oxmpi segment may be left in /dev/shm.

Each test is also compiled with MPICH's mpicc (when installed) and run on
oxmpi through the libmpich.so.12 shim, once on LD_LIBRARY_PATH and once in
LD_PRELOAD; the test itself checks that oxmpi answers and MPICH's own
library is not mapped.

The Fortran tests in c-tests/fortran (*.f: mpif.h, *.f90: the mpi
module; same directives, in a `!` comment) are built with oxmpi's mpif77
and with MPICH's mpif77, whose
binaries run on oxmpi through libmpichfort.so.12 and libmpich.so.12; the
runner checks that every MPI library they load is oxmpi's.

Ends with the line "N passed, M failed".
"""
import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 120


def directives(path):
    head = open(path).read(4000)
    m = re.search(r"oxmpi-test:(.*)", head)
    d = {"ranks": "1,2,4", "variants": "", "env": "", "expect": "pass", "stderr": "", "exit": "", "mpich": "yes"}
    if m:
        for k, v in re.findall(r'(\w+)=("[^"]*"|\S+)', m.group(1)):
            d[k] = v.strip('"')
    return d


def compile_test(cc, src, exe):
    flags = ["-O1", "-g", "-w"] if src.endswith(".f") else ["-O1", "-g", "-Wall"]
    r = subprocess.run([cc] + flags + ["-o", exe, src, "-lm"], capture_output=True, text=True)
    if r.returncode != 0:
        return r.stderr
    return None


def oxmpi_shm():
    return {f for f in os.listdir("/dev/shm") if f.startswith("oxmpi")}


def leftovers(exe, before):
    # (entries there before the run are another job's, as are those that
    # vanish meanwhile: a suite run beside this one)
    shm = sorted(oxmpi_shm() - before)
    procs = subprocess.run(["pgrep", "-f", exe], capture_output=True, text=True).stdout.split()
    return shm, procs


def run_one(mpiexec, exe, n, env, d):
    cmd = [mpiexec, "-n", str(n), "--timeout", str(TIMEOUT - 10), exe]
    t0, before = time.time(), oxmpi_shm()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"hung for {TIMEOUT} s"
    took = time.time() - t0
    problems = []
    if d["expect"] == "fail":
        if r.returncode == 0:
            problems.append("exited 0 but should have failed")
        if d["exit"] and r.returncode != int(d["exit"]):
            problems.append(f"exit code {r.returncode}, expected {d['exit']}")
        for text in filter(None, d["stderr"].split("|")):
            if text not in r.stderr:
                problems.append(f"stderr lacks {text!r}")
        if took > 5:
            problems.append(f"took {took:.1f} s to end")
    else:
        if r.returncode != 0:
            problems.append(f"exit code {r.returncode}")
        if "No Errors" not in r.stdout:
            problems.append("no 'No Errors'")
        # (the final count of failed checks is itself an MPI_Allreduce: a
        # broken reduction could lose it, not the line each check prints)
        if "check failed" in r.stderr:
            problems.append("a check failed")
    time.sleep(0.05)
    shm, procs = leftovers(exe, before)
    if shm:
        problems.append(f"left /dev/shm entries {shm}")
        for f in shm:
            try:
                os.unlink(os.path.join("/dev/shm", f))
            except FileNotFoundError:
                pass
    if procs:
        problems.append(f"left processes {procs}")
        subprocess.run(["pkill", "-9", "-f", exe])
    if problems:
        return "; ".join(problems) + "\n--- stdout:\n" + r.stdout[-2000:] + "\n--- stderr:\n" + r.stderr[-2000:]
    return None


def foreign_mpi(exe, env, libdir):
    """What MPI library `exe` would load from elsewhere than `libdir`."""
    r = subprocess.run([exe], env=dict(env, LD_TRACE_LOADED_OBJECTS="1"), capture_output=True, text=True)
    bad = [l.strip() for l in r.stdout.splitlines()
           if re.search(r"libmpi", l) and "=>" in l and not l.split("=>")[1].strip().startswith(libdir)]
    return f"loads a foreign MPI library: {bad}" if bad else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("tests", nargs="*", help="test names (default: all)")
    ap.add_argument("--no-mpich", action="store_true", help="skip the MPICH-built runs")
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for every run (e.g. OXMPI_CHECK_TYPES=1)")
    a = ap.parse_args()
    # (absolute: the loader names the libraries it maps by absolute paths)
    a.build = os.path.abspath(a.build)
    bindir = os.path.join(ROOT, "c-tests", "bin")
    os.makedirs(os.path.join(bindir, "mpich"), exist_ok=True)
    mpicc = os.path.join(a.build, "bin", "mpicc")
    mpiexec = os.path.join(a.build, "bin", "mpiexec")
    mpif77 = os.path.join(a.build, "bin", "mpif77")
    libdir = os.path.join(a.build, "lib")
    mpich_cc = None if a.no_mpich else shutil.which("mpicc.mpich")
    mpich_fc = None if a.no_mpich else shutil.which("mpif77.mpich")
    if not a.no_mpich and not mpich_cc:
        print("run_c_tests: mpicc.mpich not found; run `make setup` (the library-swap runs need MPICH)")
        sys.exit(1)
    srcs = sorted(glob.glob(os.path.join(ROOT, "c-tests", "*.c")))
    srcs += sorted(glob.glob(os.path.join(ROOT, "c-tests", "fortran", "*.f")))
    srcs += sorted(glob.glob(os.path.join(ROOT, "c-tests", "fortran", "*.f90")))
    if a.tests:
        srcs = [s for s in srcs if os.path.splitext(os.path.basename(s))[0] in a.tests]
    passed = failed = 0

    def report(name, err):
        nonlocal passed, failed
        if err:
            failed += 1
            print(f"FAIL {name}: {err}", flush=True)
        else:
            passed += 1
            print(f"ok   {name}", flush=True)

    base_env = dict(os.environ)
    for k in ("OXMPI_SINGLE_COPY", "OXMPI_SINGLE_COPY_MIN", "OXMPI_EAGER_LIMIT", "OXMPI_LONG_EAGER_LIMIT", "OXMPI_CHECK_TYPES",
              "LD_PRELOAD"):
        base_env.pop(k, None)
    base_env.update(kv.split("=", 1) for kv in a.env)
    for src in srcs:
        name, ext = os.path.splitext(os.path.basename(src))
        fortran = ext in (".f", ".f90")
        d = directives(src)
        if d.get("tcp") == "no" and base_env.get("OXMPI_TRANSPORT") == "tcp":
            print(f"skip {name}: needs ranks sharing memory (tcp=no)", flush=True)
            continue
        exe = os.path.join(bindir, name)
        err = compile_test(mpif77 if fortran else mpicc, src, exe)
        if err:
            report(f"{name} (build)", err)
            continue
        variants = [""] + [v for v in d["variants"].split(";") if v]
        for n in [int(x) for x in d["ranks"].split(",")]:
            for v in variants:
                env = dict(base_env)
                for kv in (d["env"] + "," + v).split(","):
                    if kv:
                        k, val = kv.split("=", 1)
                        env[k] = val
                report(f"{name} -n {n}{' ' + v if v else ''}", run_one(mpiexec, exe, n, env, d))
        if not mpich_cc or d["mpich"] == "no":
            continue
        mexe = os.path.join(bindir, "mpich", name)
        err = compile_test(mpich_fc if fortran else mpich_cc, src, mexe)
        if err:
            report(f"{name} (MPICH build)", err)
            continue
        n = 2 if "2" in d["ranks"].split(",") else int(d["ranks"].split(",")[0])
        shims = ["libmpichfort.so.12", "libmpich.so.12"] if fortran else ["libmpich.so.12"]
        for how, extra in (("LD_LIBRARY_PATH", {"LD_LIBRARY_PATH": libdir}),
                           ("LD_PRELOAD", {"LD_PRELOAD": " ".join(os.path.join(libdir, s) for s in shims)})):
            env = dict(base_env)
            env.update(kv.split("=", 1) for kv in d["env"].split(",") if kv)
            env.update(extra)
            err = foreign_mpi(mexe, env, libdir) if fortran else None
            report(f"{name} -n {n} MPICH-built via {how}", err or run_one(mpiexec, mexe, n, env, d))
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
