#!/usr/bin/env python3
"""Checks of mpiexec and the compiler wrappers as a user meets them:
stdin to rank 0, -l labels, environment forwarding, --timeout, a plain
non-MPI program, the output of a job that a failing rank ends, a
program started without a launcher, mpicc's -show
family, a /dev/shm too small for the shared segment, and a relocated
`make install` tree. Ends with "N passed, M failed".
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
BIN = os.path.join(BUILD, "bin")
results = []


def check(name, cond, detail=""):
    results.append(cond)
    print(f"{'ok  ' if cond else 'FAIL'} {name}{'' if cond else ': ' + detail}", flush=True)


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=60, **kw)


def main():
    tmp = tempfile.mkdtemp(prefix="oxmpi-launcher-")
    exe = os.path.join(tmp, "io")
    r = run([os.path.join(BIN, "mpicc"), "-o", exe, os.path.join(ROOT, "c-tests", "launcher", "io.c")])
    check("mpicc builds a program", r.returncode == 0, r.stderr)

    r = run([os.path.join(BIN, "mpiexec"), "-n", "3", exe], input="hello\nworld\n")
    check("stdin reaches rank 0", "stdin: hello" in r.stdout and "stdin: world" in r.stdout, r.stdout + r.stderr)
    check("a clean job exits 0", r.returncode == 0, r.stderr)

    r = run([os.path.join(BIN, "mpiexec"), "-n", "2", "-l", exe], input="")
    lines = r.stdout.splitlines()
    check("-l prefixes each line with its rank", "[0] rank 0 value (unset)" in lines and "[1] rank 1 value (unset)" in lines, r.stdout)

    env = dict(os.environ, OXMPI_TEST_VALUE="from-environment")
    r = run([os.path.join(BIN, "mpiexec"), "-n", "2", exe], env=env, input="")
    check("the environment reaches every rank", r.stdout.count("value from-environment") == 2, r.stdout)
    r = run([os.path.join(BIN, "mpirun"), "-np", "2", "-genv", "OXMPI_TEST_VALUE", "g", exe], input="")
    check("mpirun -np and -genv", r.stdout.count("value g") == 2, r.stdout + r.stderr)

    # collective settings that differ between ranks are refused at MPI_Init
    wrap = os.path.join(tmp, "differ.sh")
    with open(wrap, "w") as f:
        f.write('#!/bin/sh\n[ "$PMI_RANK" = 1 ] && export OXMPI_COLL_ALLTOALL=bruck\nexec "$@"\n')
    os.chmod(wrap, 0o755)
    r = run([os.path.join(BIN, "mpiexec"), "-n", "2", wrap, exe], input="")
    check("collective settings differing between ranks fail MPI_Init",
          r.returncode != 0 and "collective settings" in r.stderr and "differ from rank 0's" in r.stderr, r.stderr)
    with open(wrap, "w") as f:
        f.write('#!/bin/sh\n[ "$PMI_RANK" = 1 ] && export OXMPI_TRANSPORT=tcp\nexec "$@"\n')
    r = run([os.path.join(BIN, "mpiexec"), "-n", "2", wrap, exe], input="")
    check("OXMPI_TRANSPORT differing between ranks fails MPI_Init with a clear line",
          r.returncode != 0 and "OXMPI_TRANSPORT is tcp here but auto on rank 0" in r.stderr, r.stderr)
    # an algorithm name no collective has: one line naming the choices
    for name, choices in (("OXMPI_COLL_BARRIER", "use auto, dissemination, linear"),
                          ("OXMPI_COLL_ALLREDUCE", "reduce_bcast, linear, allgather"),
                          ("OXMPI_TWO_RANK_BLOCKS", "use auto, pieces, read")):
        r = run([os.path.join(BIN, "mpiexec"), "-n", "2", exe], env=dict(os.environ, **{name: "fastest"}), input="")
        check(f"{name}=fastest fails MPI_Init naming the algorithms",
              r.returncode != 0 and f"{name}=fastest is not an algorithm" in r.stderr and choices in r.stderr
              and "panicked" not in r.stderr, r.stderr)

    # ranks bound to CPUs (taskset, as a batch system binds them): the host's
    # cores are the union of the ranks' CPUs, alike for all of them, so the
    # collectives that choose by it choose alike (rank 0 alone bound to one
    # CPU once took long allgathers one way and rank 1 the other)
    pieces = os.path.join(tmp, "coll_pieces")
    r = run([os.path.join(BIN, "mpicc"), "-I", os.path.join(ROOT, "c-tests"), "-o", pieces,
             os.path.join(ROOT, "c-tests", "coll_pieces.c")])
    check("mpicc builds coll_pieces", r.returncode == 0, r.stderr)
    cpus = sorted(os.sched_getaffinity(0))
    bind = os.path.join(tmp, "bind.sh")
    cases = " ".join(f"{i}) c={c};;" for i, c in enumerate(cpus))
    with open(bind, "w") as f:
        f.write("#!/bin/sh\n# BIND=one: rank 0 alone on the first CPU; BIND=each: rank r on CPU r mod their count\n"
                f'if [ "$BIND" = each ]; then\n  case $((PMI_RANK % {len(cpus)})) in {cases} esac\n'
                '  exec taskset -c "$c" "$@"\nfi\n'
                f'[ "$PMI_RANK" = 0 ] && exec taskset -c {cpus[0]} "$@"\nexec "$@"\n')
    os.chmod(bind, 0o755)
    for how, n in (("one", 2), ("one", 4), ("each", 2), ("each", 4)):
        env = dict(os.environ, BIND=how, OXMPI_DEBUG="1")
        r = run([os.path.join(BIN, "mpiexec"), "-n", str(n), bind, pieces], env=env)
        cores = len(cpus) if how == "one" else min(n, len(cpus))
        want = f"{n} ranks on {cores} cores of this host"
        check(f"{n} ranks bound ({how}): long collectives agree and the host has {cores} cores",
              r.returncode == 0 and "No Errors" in r.stdout and r.stderr.count(want) == n, r.stdout + r.stderr)

    # OXMPI_SLOTS=auto deepens the rings only where ranks outnumber the
    # cores (64 slots up to 4 ranks); a value set is kept
    for n, slots in ((2, None), (4, None), (4, "16")):
        env = dict(os.environ, OXMPI_DEBUG="1")
        if slots:
            env["OXMPI_SLOTS"] = slots
        want = slots or ("64" if n > len(cpus) else "8")
        r = run([os.path.join(BIN, "mpiexec"), "-n", str(n), pieces], env=env)
        check(f"{n} ranks on {len(cpus)} CPUs, OXMPI_SLOTS={slots or 'auto'}: {want} ring slots a pair",
              r.returncode == 0 and r.stderr.count(f" {want} ring slots a pair") == n, r.stdout + r.stderr)
    r = run([os.path.join(BIN, "mpiexec"), "-n", "2", pieces], env=dict(os.environ, OXMPI_SLOTS="7"))
    check("OXMPI_SLOTS=7 fails MPI_Init with one clear line a rank",
          r.returncode != 0 and r.stderr.count("OXMPI_SLOTS=7 must be auto or a power of two from 2 to 1024") == 2,
          r.stderr)

    r = run([os.path.join(BIN, "mpiexec"), "-n", "2", "--timeout", "2", exe, "99"], input="")
    check("--timeout ends a job that runs too long", r.returncode != 0 and "timeout" in r.stderr, f"{r.returncode} {r.stderr}")
    left = [f for f in os.listdir("/dev/shm") if f.startswith("oxmpi")]
    check("no segment left after a timeout", not left, str(left))

    # SIGUSR2 to mpiexec: every rank prints its queues and carries on
    p = subprocess.Popen([os.path.join(BIN, "mpiexec"), "-n", "2", exe, "98"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    import time
    time.sleep(1.5)
    p.send_signal(signal.SIGUSR2)
    time.sleep(1.0)
    alive = p.poll() is None
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    check("SIGUSR2 leaves the job running", alive, err)
    check("SIGUSR2 makes every rank print its pending receives",
          all(f"oxmpi: rank {r}: pending receive" in err for r in (0, 1)), err)
    check("SIGUSR2 shows the unexpected queue", "unexpected message: from world rank" in err and "tag 5" in err, err)
    check("SIGUSR2 shows an open Ibarrier on the arrival lines",
          "oxmpi: rank 0: pending collective" in err and "MPI_Barrier of operation" in err and "1 of 2 parts there" in err, err)
    check("SIGTERM to mpiexec ends the job", p.returncode != 0, str(p.returncode))

    r = run([os.path.join(BIN, "mpiexec"), "-n", "2", "sh", "-c", "exit 0"])
    check("a non-MPI program runs under mpiexec", r.returncode == 0, r.stderr)
    r = run([os.path.join(BIN, "mpiexec"), "-n", "2", "sh", "-c", "exit 5"])
    check("the exit status is the failing rank's", r.returncode == 5, str(r.returncode))

    # a job that a failing rank ends, its output going to a file: what
    # every rank had printed is there (MPICH's ranks write unbuffered, Open
    # MPI's to a terminal; ours inherit the file, which C's stdio and
    # gfortran would buffer whole)
    ended = os.path.join(tmp, "ended_output")
    builds = [("", [os.path.join(BIN, "mpicc")])]
    if shutil.which("mpicc.mpich"):
        builds.append((" (built by MPICH, swapped)", ["mpicc.mpich"]))
    for how, cc in builds:
        r = run(cc + ["-o", ended, os.path.join(ROOT, "c-tests", "launcher", "ended_output.c")])
        for end, code in (("abort", 3), ("segv", 128 + signal.SIGSEGV)):
            out = os.path.join(tmp, "ended.txt")
            with open(out, "w") as f:
                p = subprocess.run([os.path.join(BIN, "mpiexec"), "-n", "3", ended, end], stdout=f,
                                   stderr=subprocess.PIPE, text=True, timeout=60,
                                   env=dict(os.environ, LD_LIBRARY_PATH=os.path.join(BUILD, "lib")))
            text = open(out).read()
            want = [f"rank {r} printed this" for r in range(3)] + (["rank 0 left this line open"] if end == "abort" else [])
            check(f"a job ended by rank 0's {end}{how}: every rank's output reaches a file",
                  r.returncode == 0 and p.returncode == code and all(w in text for w in want),
                  f"{r.stderr} exit {p.returncode}: {text!r} {p.stderr}")
    fended = os.path.join(tmp, "ended_output_f")
    r = run([os.path.join(BIN, "mpif77"), "-o", fended, os.path.join(ROOT, "c-tests", "launcher", "ended_output.f")])
    for env, who in (({}, range(3)), ({"GFORTRAN_UNBUFFERED_PRECONNECTED": "n"}, [0])):
        out, unit10 = os.path.join(tmp, "ended_f.txt"), os.path.join(tmp, "unit10.txt")
        with open(out, "w") as f:
            p = subprocess.run([os.path.join(BIN, "mpiexec"), "-n", "3", fended, unit10], stdout=f,
                               stderr=subprocess.PIPE, text=True, timeout=60, env=dict(os.environ, **env))
        text = open(out).read()
        kept = open(unit10).read() if os.path.exists(unit10) else ""
        check(f"a Fortran job ended by MPI_ABORT{' (' + str(env) + ')' if env else ''}: "
              f"{'every rank' if len(who) > 1 else 'the aborting rank'}'s unit 6 reaches a file, and its unit 10",
              r.returncode == 0 and p.returncode == 3 and all(f"rank {r} wrote this" in text for r in who)
              and "rank 0 wrote this to unit 10" in kept, f"{r.stderr} exit {p.returncode}: {text!r} {kept!r} {p.stderr}")
    r = run([os.path.join(BIN, "mpiexec"), "-n", "1", "sh", "-c", "echo $GFORTRAN_UNBUFFERED_PRECONNECTED"])
    r2 = run([os.path.join(BIN, "mpiexec"), "-n", "1", "sh", "-c", "echo $GFORTRAN_UNBUFFERED_PRECONNECTED"],
             env=dict(os.environ, GFORTRAN_UNBUFFERED_PRECONNECTED="n"))
    check("mpiexec sets GFORTRAN_UNBUFFERED_PRECONNECTED=y, unless it is set",
          r.stdout.strip() == "y" and r2.stdout.strip() == "n", r.stdout + r2.stdout)

    r = run([exe], input="x\n")
    check("without a launcher a program is a one-rank world", r.returncode == 0 and "rank 0 value" in r.stdout, r.stderr)

    r = run([os.path.join(BIN, "mpicc"), "-show", "-c", "x.c"])
    check("mpicc -show", r.stdout.startswith("cc ") and "-I" in r.stdout and "-lmpi" not in r.stdout, r.stdout)
    r = run([os.path.join(BIN, "mpicc"), "-show", "x.c"])
    check("mpicc -show links with rpath", "-lmpi" in r.stdout and "-Wl,-rpath," in r.stdout, r.stdout)
    r = run([os.path.join(BIN, "mpicc"), "-compile-info"])
    check("mpicc -compile-info", "-I" in r.stdout and "-lmpi" not in r.stdout, r.stdout)
    r = run([os.path.join(BIN, "mpicc"), "-link-info"])
    check("mpicc -link-info", "-lmpi" in r.stdout, r.stdout)
    r = run([os.path.join(BIN, "mpicc"), "--showme:link"])
    check("mpicc --showme:link (Open MPI spelling)", "-lmpi" in r.stdout and not r.stdout.startswith("cc"), r.stdout)
    r = run([os.path.join(BIN, "mpicxx"), "-show", "x.cc"])
    check("mpicxx uses the C++ compiler", r.stdout.startswith("c++ "), r.stdout)
    r = run([os.path.join(BIN, "mpicc"), "-show", "x.c"], env=dict(os.environ, OXMPI_CC="clang"))
    check("OXMPI_CC overrides the compiler", r.stdout.startswith("clang "), r.stdout)

    for f in ("mpif77", "mpif90", "mpifort"):
        r = run([os.path.join(BIN, f), "-show", "x.f"])
        check(f"{f} -show: gfortran, mpif.h's flag, the Fortran library", r.stdout.startswith("gfortran ")
              and "-fallow-argument-mismatch" in r.stdout and "-lmpifort -lmpi" in r.stdout, r.stdout)
    fexe = os.path.join(tmp, "free_form")
    r = run([os.path.join(BIN, "mpif90"), "-o", fexe, os.path.join(ROOT, "c-tests", "launcher", "free_form.f90")])
    r2 = run([os.path.join(BIN, "mpiexec"), "-n", "3", fexe], input="")
    check("mpif90 builds a free-form program that includes mpif.h, and it runs",
          r.returncode == 0 and r2.returncode == 0 and r2.stdout.strip() == "ranks 3 sum 3", r.stderr + r2.stdout + r2.stderr)
    fexe = os.path.join(tmp, "use_mpi_keywords")
    r = run([os.path.join(BIN, "mpif90"), "-o", fexe, os.path.join(ROOT, "c-tests", "launcher", "use_mpi_keywords.f90")])
    r2 = run([os.path.join(BIN, "mpiexec"), "-n", "3", fexe], input="")
    check("mpif90 builds a program that uses the mpi module, calling MPI_SENDRECV by keyword, and it runs",
          r.returncode == 0 and r2.returncode == 0
          and sorted(r2.stdout.split("\n")[:3]) == ["rank 0 got 2", "rank 1 got 0", "rank 2 got 1"],
          r.stderr + r2.stdout + r2.stderr)
    r = run([os.path.join(BIN, "mpif90"), "-c", "-o", os.path.join(tmp, "mismatch.o"),
             os.path.join(ROOT, "c-tests", "launcher", "use_mpi_mismatch.f90")])
    check("the mpi module's interfaces refuse a REAL count at compile time",
          r.returncode != 0 and "Type mismatch in argument" in r.stderr and "count" in r.stderr, r.stderr)
    # every mpif.h test, made to use the module instead, compiles: the
    # interfaces agree with the calls of a few thousand lines of Fortran
    refused = []
    for src in sorted(glob.glob(os.path.join(ROOT, "c-tests", "fortran", "*.f"))):
        text = re.sub(r"(?im)^\s+INCLUDE 'mpif.h'\n", "", open(src).read())
        text = re.sub(r"(?im)^(      (PROGRAM|SUBROUTINE|(\w+ )?FUNCTION) .*\n)", r"\1      USE MPI\n", text)
        moduled = os.path.join(tmp, os.path.basename(src))
        open(moduled, "w").write(text)
        for inc in glob.glob(os.path.join(ROOT, "c-tests", "fortran", "*.inc")):
            shutil.copy(inc, tmp)
        r = run([os.path.abspath(os.path.join(BIN, "mpif77")), "-c", "-w", "-o", moduled + ".o", moduled], cwd=tmp)
        if r.returncode != 0:
            refused.append(f"{os.path.basename(src)}: {r.stderr}")
    check("every Fortran test compiles with `use mpi` in place of mpif.h", not refused, "\n".join(refused))
    r = run([os.path.join(BIN, "mpif77"), "-show", "x.f"], env=dict(os.environ, OXMPI_FC="flang"))
    check("OXMPI_FC overrides the Fortran compiler", r.stdout.startswith("flang ") and "-fallow" not in r.stdout,
          r.stdout)

    # a /dev/shm too small for the host's segment (as in a container with
    # the default 64 MiB and many ranks): MPI_Init fails on every rank with
    # a line that says so, where a rank would have died of SIGBUS whenever
    # a collective first reached a page past the room; nothing is left in
    # /dev/shm. A private mount namespace gives the job a 1 MiB one.
    if os.geteuid() == 0 and shutil.which("unshare"):
        script = (f"mount -t tmpfs -o size=1m oxmpi-small /dev/shm && "
                  f"{os.path.join(BIN, 'mpiexec')} -n 4 {exe}; echo rc=$?; echo left=$(ls /dev/shm | wc -l)")
        r = run(["unshare", "-m", "sh", "-c", script], input="")
        check("a /dev/shm too small for the segment fails MPI_Init with a clear line, leaving nothing",
              "rc=1" in r.stdout and "left=0" in r.stdout and "more than /dev/shm has room for" in r.stderr
              and "make /dev/shm larger" in r.stderr and "Bus error" not in r.stderr and "panicked" not in r.stderr,
              r.stdout + r.stderr)
    else:
        print("skip the small /dev/shm check: it needs root and unshare for a mount namespace")

    r = run([os.path.join(BIN, "oxmpi-info")])
    check("oxmpi-info lists the tunables", all(t in r.stdout for t in
          ["OXMPI_EAGER_LIMIT", "OXMPI_UNEXPECTED_BYTES", "OXMPI_TRANSPORT", "OXMPI_SINGLE_COPY"]), r.stdout)

    # a relocated install: install to one place, move it, build and run
    prefix = os.path.join(tmp, "prefix")
    r = run(["make", "-s", "-C", ROOT, "install", f"PREFIX={prefix}"])
    moved = os.path.join(tmp, "moved")
    shutil.move(prefix, moved)
    exe2 = os.path.join(tmp, "io2")
    r = run([os.path.join(moved, "bin", "mpicc"), "-o", exe2, os.path.join(ROOT, "c-tests", "launcher", "io.c")])
    r2 = run([os.path.join(moved, "bin", "mpiexec"), "-n", "2", exe2], input="")
    check("a moved install tree compiles and runs", r.returncode == 0 and r2.returncode == 0 and r2.stdout.count("value") == 2,
          r.stderr + r2.stderr)
    fexe = os.path.join(tmp, "f_moved")
    r = run([os.path.join(moved, "bin", "mpif77"), "-o", fexe, os.path.join(ROOT, "c-tests", "fortran", "f_pt2pt.f")])
    r2 = run([os.path.join(moved, "bin", "mpiexec"), "-n", "2", fexe], input="")
    check("a moved install tree compiles and runs a Fortran program", r.returncode == 0 and r2.returncode == 0
          and "No Errors" in r2.stdout, r.stderr + r2.stdout + r2.stderr)
    for f in ["bin/mpicc", "bin/mpicxx", "bin/mpiexec", "bin/mpirun", "bin/oxmpi-info", "include/mpi.h",
              "bin/mpif77", "bin/mpif90", "bin/mpifort", "include/mpif.h", "include/mpi.mod", "include/oxmpi_sizeof.mod", "lib/libmpifort.so.12",
              "lib/libmpichfort.so.12",
              "lib/libmpi.so", "lib/libmpi.so.12", "lib/libmpich.so.12", "lib/pkgconfig/oxmpi.pc"]:
        check(f"install has {f}", os.path.exists(os.path.join(moved, f)))
    r = run(["readelf", "-d", os.path.join(moved, "lib", "libmpi.so.12")])
    check("libmpi's soname is libmpi.so.12", "[libmpi.so.12]" in r.stdout, r.stdout)
    r = run(["readelf", "-d", os.path.join(moved, "lib", "libmpich.so.12")])
    check("the libmpich.so.12 shim needs libmpi.so.12", "[libmpich.so.12]" in r.stdout and "NEEDED" in r.stdout and "[libmpi.so.12]" in r.stdout, r.stdout)
    r = run(["readelf", "-d", os.path.join(moved, "lib", "libmpichfort.so.12")])
    check("the libmpichfort.so.12 shim needs libmpifort.so.12", "[libmpichfort.so.12]" in r.stdout
          and "[libmpifort.so.12]" in r.stdout, r.stdout)
    shutil.rmtree(tmp)
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
