#!/usr/bin/env python3
"""Side-by-side benchmarks: oxmpi, Debian's MPICH and Debian's Open MPI run
the same programs (c-tests/bench), interleaved round by round so that the
machine's state affects all three alike; the best of the rounds counts.
Writes docs/benchmarks.md with the tables and the ratios.

  tools/bench.py [--rounds 3] [--out docs/benchmarks.md]

Needs `make build` and the packages mpich, libmpich-dev, openmpi-bin,
libopenmpi-dev (`make bench` installs them).
"""
import argparse
import datetime
import os
import re
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "c-tests", "bench")
BUILD = os.path.join(ROOT, "build")
# where the tables go (tools/bench_*.py write sections of their own)
OUT = os.path.join(ROOT, "docs", "benchmarks.md")

IMPLS = {
    "oxmpi": (os.path.join(BUILD, "bin", "mpicc"), [os.path.join(BUILD, "bin", "mpiexec"), "-n"]),
    "MPICH": ("mpicc.mpich", ["mpiexec.mpich", "-n"]),
    "Open MPI": ("mpicc.openmpi", ["mpirun.openmpi", "--oversubscribe", "--bind-to", "none", "-n"]),
}
PROGRAMS = ["pingpong", "exchange", "allreduce_loop", "ddt", "coll"]
# (program, ranks, quick, tcp): quick divides the iteration counts by 20;
# tcp forces each implementation onto its TCP path over loopback
RUNS = [("pingpong", 2, False, False), ("exchange", 2, False, False), ("allreduce_loop", 2, False, False),
        ("ddt", 2, False, False), ("coll", 2, False, False), ("pingpong", 4, True, False),
        ("allreduce_loop", 4, True, False), ("coll", 4, True, False), ("pingpong", 2, False, True)]
# How each one is forced onto TCP over loopback (environment, mpiexec options).
TCP = {
    "oxmpi": ({"OXMPI_TRANSPORT": "tcp", "OXMPI_IFACE": "lo"}, []),
    "MPICH": ({"MPIR_CVAR_NOLOCAL": "1", "UCX_TLS": "tcp", "UCX_NET_DEVICES": "lo"}, []),
    "Open MPI": ({}, ["--mca", "pml", "ob1", "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "lo"]),
}
TIMEOUT = 300


def build_program(prog):
    """c-tests/bench/`prog`.c, built with each implementation's mpicc into
    c-tests/bench/bin/<implementation>/`prog`."""
    for impl, (cc, _) in IMPLS.items():
        d = os.path.join(BENCH, "bin", impl.replace(" ", "_"))
        os.makedirs(d, exist_ok=True)
        subprocess.run([cc, "-O2", "-o", os.path.join(d, prog), os.path.join(BENCH, prog + ".c")], check=True)


def build():
    for p in PROGRAMS:
        build_program(p)
    subprocess.run(["cc", "-O2", "-o", os.path.join(BENCH, "bin", "floor"), os.path.join(BENCH, "floor.c")], check=True)


def round_order(rnd, impls):
    """The implementations in round `rnd`'s order: each round starts with
    the next one, so none always runs first, right after another job."""
    impls = list(impls)
    k = rnd % len(impls)
    return impls[k:] + impls[:k]


def median_ratio(runs):
    """oxmpi's median over the rounds divided by the better peer's median,
    or None: `runs` maps each implementation to its list of times."""
    meds = {i: statistics.median(ts) for i, ts in runs.items() if ts}
    peers = [v for i, v in meds.items() if i != "oxmpi"]
    return meds["oxmpi"] / min(peers) if meds.get("oxmpi") and peers else None


def floor(n):
    """What the machine allows without MPI, `n` processes: {case: us}."""
    r = subprocess.run([os.path.join(BENCH, "bin", "floor"), str(n)], capture_output=True, text=True, timeout=TIMEOUT)
    return {f[1]: float(f[3]) for f in (l.split() for l in r.stdout.splitlines()) if len(f) == 4 and f[0] == "RESULT"}


def run(impl, prog, n, quick, tcp=False, args=()):
    exe = os.path.join(BENCH, "bin", impl.replace(" ", "_"), prog)
    extra_env, extra_args = TCP[impl] if tcp else ({}, [])
    launcher = IMPLS[impl][1]
    cmd = launcher[:-1] + extra_args + launcher[-1:] + [str(n), exe] + (["quick"] if quick else []) + list(args)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **extra_env)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return None
    out = {}
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) >= 4 and f[0] == "RESULT":
            out[int(f[2]) if f[2].isdigit() else f[2]] = float(f[3])
    if r.returncode != 0 or not out:
        sys.stderr.write(f"bench: {impl} {prog} -n {n} failed:\n{r.stderr[-1500:]}\n")
        return None
    return out


def split_case(k):
    """("allreduce", 1024) for "allreduce_1024"; (k, 0) for other names."""
    name, _, size = k.rpartition("_")
    return (name, int(size)) if name and size.isdigit() else (k, 0)


def human(n):
    if isinstance(n, str):
        name, size = split_case(n)
        return f"{name.replace('_', ' ')} {human(size)}" if size else n.replace("_", " ")
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n // size} {unit}"
    return f"{n} B"


def busy_share(seconds=1.0):
    """The share of the machine's CPU time not idle over the next `seconds`."""

    def snap():
        f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
        return sum(f), f[3] + f[4]

    (t0, i0), _, (t1, i1) = snap(), time.sleep(seconds), snap()
    return 1 - (i1 - i0) / max(1, t1 - t0)


def refuse_if_busy(allow):
    """Stop (unless `allow`) when something else keeps the CPUs busy: its
    load would land on whichever implementation runs beside it, and the
    tables would not say so (a NAS run beside a collective loop once made
    a 2-rank Barrier take 700 us)."""
    busy = busy_share()
    if busy > 0.25 and not allow:
        sys.exit(f"bench: the CPUs are {busy:.0%} busy with other work; wait for it to end (or pass --allow-busy)")


def record(best, every, key, res):
    """Keep round results `res` ({case: time}, None: the run failed) of
    `key` in `best` (the best time of each case) and `every` (each
    case's times over the rounds)."""
    if res is None:
        best.setdefault(key, None)
        return
    old = best.get(key) or {}
    best[key] = {s: min(v, old.get(s, v)) for s, v in res.items()}
    for s, v in res.items():
        every.setdefault(key, {}).setdefault(s, []).append(v)


def write_section(path, begin, end, block):
    """Put `block` (from the line `begin` to the line `end`) into the file
    at `path` in place of its old one, or at its end."""
    old = open(path).read() if os.path.exists(path) else ""
    if begin in old:
        new = old[:old.index(begin)] + block + old[old.index(end, old.index(begin)) + len(end):]
    else:
        new = (old.rstrip("\n") + "\n\n" if old.strip() else "") + block
    open(path, "w").write(new)


def floor_table(names, floors, slowest, keep):
    """The table of the floor cases `names` (case: what it measures) that
    `keep` takes and the floor program printed: the fastest and the
    slowest round of each (microseconds)."""
    return ["| case | us (fastest round) | us (slowest round) |", "|---|---|---|"] + [
        f"| {names[k]} | {us(floors[k])} | {us(slowest[k])} |" for k in names if keep(k) and k in floors] + [""]


def us(v):
    """Microseconds as the floor tables show them: three figures below 1."""
    return f"{v:.3f}" if v < 1 else f"{v:.2f}"


def rows(best, every, run):
    """The table rows of `run` (program, ranks, tcp): each case's best time
    on each implementation, the ratio and the median ratio. `best` and
    `every` map (program, ranks, implementation, tcp) to {case: best time}
    (None: failed) and {case: [every round's time]}."""
    prog, n, tcp = run
    cases = set().union(*[set((best.get((prog, n, i, tcp)) or {}).keys()) for i in IMPLS])
    out = []
    for s in sorted(cases, key=lambda k: (isinstance(k, str), split_case(k) if isinstance(k, str) else ("", k))):
        vals = {i: (best.get((prog, n, i, tcp)) or {}).get(s) for i in IMPLS}
        peers = [v for i, v in vals.items() if i != "oxmpi" and v is not None]
        ratio = f"{vals['oxmpi'] / min(peers):.2f}" if vals["oxmpi"] and peers else "n/a"
        m = median_ratio({i: every.get((prog, n, i, tcp), {}).get(s) for i in IMPLS})
        med_ratio = f"{m:.2f}" if m else "n/a"
        # (a run that failed: timeout; a case one implementation lacks: n/a)
        cells = [f"{v:.2f}" if v is not None else "timeout" if best.get((prog, n, i, tcp)) is None else "n/a"
                 for i, v in vals.items()]
        out.append(f"| {human(s)} | " + " | ".join(cells) + f" | {ratio} | {med_ratio} |")
    return out


def measure(best, every, rnd, impl, prog, n, quick, tcp=False, args=()):
    """Run `prog` once (`run`), say how it went in round `rnd`, and record
    its times under (prog, n, impl, tcp) (`record`)."""
    res = run(impl, prog, n, quick, tcp, args)
    print(f"round {rnd + 1}: {impl:9} {prog} -n {n}{' tcp' if tcp else ''}: "
          f"{'failed or timed out' if res is None else 'ok'}", flush=True)
    record(best, every, (prog, n, impl, tcp), res)


def table(best, every, run, first="case"):
    """The side-by-side table of `run` (program, ranks, tcp): its head,
    then `rows`."""
    return [f"| {first} | oxmpi us | MPICH us | Open MPI us | ratio | median ratio |",
            "|---|---|---|---|---|---|"] + rows(best, every, run)


def library_rev():
    """The library measured: the commit it was built from, with a "+" when
    the library's sources differed from it."""
    git = lambda *args: subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True).stdout.strip()
    rev = git("rev-parse", "--short", "HEAD") or "an unknown commit"
    if git("status", "--porcelain", "--", "src", "csrc", "fortran-shim", "include", "Cargo.toml", "Cargo.lock", "build.rs"):
        rev += "+"
    return rev


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--allow-busy", action="store_true", help="run even while other work keeps the CPUs busy")
    a = ap.parse_args()
    build()
    refuse_if_busy(a.allow_busy)
    best, every = {}, {}
    floors, slowest = {}, {}
    for rnd in range(a.rounds):
        for procs in (2, 4):
            for k, v in floor(procs).items():
                floors[k] = min(v, floors.get(k, v))
                slowest[k] = max(v, slowest.get(k, v))
        for prog, n, quick, tcp in RUNS:
            for impl in round_order(rnd, IMPLS):
                measure(best, every, rnd, impl, prog, n, quick, tcp)
    cpu = ""
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    rev = library_rev()
    lines = ["# Benchmarks", "",
             f"Made by `python3 tools/bench.py --rounds {a.rounds}` (or `make bench`) on {rev}'s library, "
             f"{datetime.date.today()}, {os.cpu_count()} cores ({cpu}), {platform.system()} {platform.release()}.",
             "oxmpi, Debian's MPICH (`mpiexec.mpich`) and Debian's Open MPI (`mpirun.openmpi --oversubscribe`)",
             "run the same programs from `c-tests/bench/`, compiled with each one's own `mpicc`,",
             "interleaved round by round (each round started by the next one); each figure is the best of the rounds. Times are",
             "microseconds (half round trip for ping-pong, one exchange, one allreduce);",
             "ratio = oxmpi / the better of MPICH and Open MPI (below 1: oxmpi is faster); median ratio = the same",
             "of each one's median over the rounds, which one lucky round moves less than the best.", ""]
    for prog, n, quick, tcp in RUNS:
        title = {"pingpong": "Ping-pong (COMMS1)", "exchange": "Exchange (COMMS2)", "allreduce_loop": "Allreduce loop",
                 "ddt": "Derived datatypes: ping-pong (half round trip) and MPI_Pack of one item",
                 "coll": "Collectives (one call; Gather, Scatter, Alltoall(v) and Allgather(v) sizes are one rank's block)"}[prog]
        note = []
        if tcp:
            title += " over TCP on loopback"
            note = ["Each one forced onto its TCP path: oxmpi `OXMPI_TRANSPORT=tcp OXMPI_IFACE=lo`; MPICH (ch4:ucx) "
                    "`MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp UCX_NET_DEVICES=lo`; Open MPI "
                    "`--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo`.", ""]
        over = " (oversubscribed: 4 ranks on 2 cores; ranks 2-3 wait in a barrier)" if n > os.cpu_count() and prog == "pingpong" else \
            " (oversubscribed: 4 ranks on 2 cores)" if n > os.cpu_count() else ""
        lines += [f"## {title}, {n} ranks{over}", ""] + note
        lines += table(best, every, (prog, n, tcp), "case" if prog in ("ddt", "coll") else "size") + [""]
        names = {"line": "one cache line passed from one CPU to the other (two processes pinned, taking turns writing it)",
                 "switch": "one hand-over of a core between two processes (sched_yield)",
                 f"yield_barrier_{n}": f"barrier of {n} processes on one counter, waiting by sched_yield",
                 f"core_barrier_{n}": f"barrier of {n} processes, yielding only while one not yet there last ran on the same core",
                 f"futex_barrier_{n}": f"barrier of {n} processes on one counter, waiting asleep on a futex",
                 f"alltoall_copy_{n}": f"alltoall of 1 MiB blocks among {n} processes by memcpy from shared memory",
                 f"allgather_copy_{n}": f"allgather of 1 MiB blocks among {n} processes by memcpy from shared memory",
                 f"bcast_copy_{n}": f"bcast of 1 MiB from one process to {n - 1} by memcpy from shared memory",
                 f"alltoall_cma_{n}": f"alltoall of 1 MiB blocks among {n} processes by cross-memory copy",
                 f"allgather_cma_{n}": f"allgather of 1 MiB blocks among {n} processes by cross-memory copy",
                 f"bcast_cma_{n}": f"bcast of 1 MiB from one process to {n - 1} by cross-memory copy",
                 f"alltoall64k_copy_{n}": f"alltoall of 64 KiB blocks among {n} processes by memcpy from shared memory",
                 f"alltoall64k_cma_{n}": f"alltoall of 64 KiB blocks among {n} processes by cross-memory copy"}
        if prog == "coll" and n == 2 and floors:
            lines += ["What the machine allows, without MPI (`c-tests/bench/floor.c`, the fastest and the slowest of the",
                      "rounds). The first line is the floor under a small message between ranks on the two cores: this",
                      "virtual machine's host places its two virtual CPUs anew now and then (sharing one core's caches, on",
                      "two cores near each other, or far apart), the time a cache line takes to pass between them moves",
                      "several-fold with it, and every small message and every pipeline through shared memory above moves",
                      "with it, on every MPI alike. Below it, what the memory allows: an ideal",
                      "Alltoall, Allgather or Bcast, each process copying its blocks straight out of the others' buffers in",
                      "shared memory by memcpy (one copy per byte, no messages, a barrier per round), moves as many",
                      "bytes as the single-copy algorithms do; it is the floor under the 1 MiB cases. The same out of",
                      "the others' private memory by cross-memory copies (`process_vm_readv`, a process's own block by",
                      "memcpy) is what single-copy algorithms can do where buffers are not shared (every MPI here):",
                      "the kernel pins every page it copies, which costs more than the copy.", ""]
            lines += floor_table(names, floors, slowest, lambda k: k == "line" or "copy" in k or "cma" in k)
        if prog == "coll" and n == 4 and floors:
            lines += ["What the machine allows, without MPI (`c-tests/bench/floor.c`, the fastest and the slowest of the rounds): with more",
                      "processes than cores, every collective needs each core to switch processes at least once (one",
                      "hand-over, the first line), and waiting by `sched_yield` is the cheapest way to (a futex sleep",
                      "costs a wake-up system call and a slower switch). A barrier of plain processes that yield",
                      "whenever they wait switches more often than that; one whose processes yield only while one not",
                      "yet there last ran on their own core (as oxmpi's short collectives wait) comes nearest, and is",
                      "the floor under every small collective above. Under the 1 MiB cases lies the memory: an ideal Alltoall,",
                      "Allgather or Bcast by memcpy from shared memory, as at 2 ranks; the Alltoall's buffers, 32 MiB in all,",
                      "are far out of the caches. A Bcast through shared slots copies each byte twice (the root's",
                      "copy in, then each reader's copy out), and a cross-memory copy costs more per byte than memcpy:",
                      "the single-copy Bcast here is below what either can do. So is the 64 KiB Alltoall by memcpy from",
                      "shared memory: a program's buffers are its own, so an MPI either copies every block twice",
                      "(into shared slots, then out) or once across by the kernel, whose line is below it.", ""]
            lines += floor_table(names, floors, slowest, lambda k: k != "line")
    # keep the tables of tools/bench_nas.py, tools/bench_overlap.py, tools/bench_nbc.py, tools/bench_mid.py
    # and tools/bench_loaded.py
    old = open(a.out).read() if os.path.exists(a.out) else ""
    kept = re.findall(r"<!-- BEGIN (?:NAS|OVERLAP|NBC|MID|LOADED).*?<!-- END (?:NAS|OVERLAP|NBC|MID|LOADED) -->\n", old, re.S)
    open(a.out, "w").write("\n".join(lines) + "".join("\n" + k for k in kept))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
