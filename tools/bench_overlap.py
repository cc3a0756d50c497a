#!/usr/bin/env python3
"""What a progress thread buys and costs: c-tests/bench/overlap.c at 2
ranks on oxmpi and MPICH, each without and with its progress thread
(OXMPI_ASYNC_PROGRESS=1, MPIR_CVAR_ASYNC_PROGRESS=1), and Open MPI,
interleaved round by round; the best of the rounds goes into
docs/benchmarks.md (between its OVERLAP markers; tools/bench.py keeps them).

  tools/bench_overlap.py [--rounds 5] [--allow-busy]
"""
import argparse
import os
import subprocess
import sys

from bench import BENCH, IMPLS, OUT, build_program, refuse_if_busy, round_order, write_section

BEGIN = "<!-- BEGIN OVERLAP (tools/bench_overlap.py) -->\n"
END = "<!-- END OVERLAP -->\n"
# (label, implementation, environment)
CONFIGS = [
    ("oxmpi", "oxmpi", {}),
    ("oxmpi, progress thread", "oxmpi", {"OXMPI_ASYNC_PROGRESS": "1"}),
    ("MPICH", "MPICH", {}),
    ("MPICH, progress thread", "MPICH", {"MPIR_CVAR_ASYNC_PROGRESS": "1"}),
    ("Open MPI", "Open MPI", {}),
]
CASES = {
    "late_send": "blocking send of 4 MiB to a rank computing 2 ms after posting its receive",
    "iallreduce_compute": "Iallreduce of 1 MiB, 500 us of computing, Wait (both ranks)",
    "pingpong_8": "ping-pong of 8 B, half round trip",
}


def exe(impl):
    return os.path.join(BENCH, "bin", impl.replace(" ", "_"), "overlap")


def run(impl, extra):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **extra)
    try:
        r = subprocess.run(IMPLS[impl][1] + ["2", exe(impl)], capture_output=True, text=True, env=env, timeout=300)
    except subprocess.TimeoutExpired:
        return None
    out = {f[1]: float(f[3]) for f in (l.split() for l in r.stdout.splitlines()) if len(f) == 4 and f[0] == "RESULT"}
    if r.returncode != 0 or r.stderr.strip() and "wrong" in r.stderr or set(out) != set(CASES):
        sys.stderr.write(f"bench_overlap: {impl} {extra} failed:\n{r.stderr[-1500:]}\n")
        return None
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--allow-busy", action="store_true", help="run even while other work keeps the CPUs busy")
    a = ap.parse_args()
    build_program("overlap")
    refuse_if_busy(a.allow_busy)
    best = {}
    for rnd in range(a.rounds):
        for label, impl, extra in round_order(rnd, CONFIGS):
            res = run(impl, extra)
            print(f"round {rnd + 1}: {label}: {'failed or timed out' if res is None else res}", flush=True)
            for case, v in (res or {}).items():
                best[(label, case)] = min(v, best.get((label, case), v))
    cmd = f"python3 tools/bench_overlap.py --rounds {a.rounds}"
    lines = [BEGIN, "## Progress while computing, 2 ranks\n", "\n",
             f"`{cmd}`: `c-tests/bench/overlap.c` on each MPI without and with its progress thread "
             "(`OXMPI_ASYNC_PROGRESS=1`, `MPIR_CVAR_ASYNC_PROGRESS=1`; Debian's Open MPI has none), interleaved; "
             "each figure is the best of the rounds of each run's median, in microseconds. The first case needs the "
             "computing rank's library to act while it computes; in the second both ranks compute beside their "
             "collective, whose steps the thread can take meanwhile; the third is what the thread costs blocking "
             "calls.\n", "\n",
             "| case | " + " | ".join(c[0] for c in CONFIGS) + " |\n",
             "|---|" + "---|" * len(CONFIGS) + "\n"]
    for case, what in CASES.items():
        cells = [f"{best[(c[0], case)]:.2f}" if (c[0], case) in best else "failed" for c in CONFIGS]
        lines.append(f"| {what} | " + " | ".join(cells) + " |\n")
    lines.append(END)
    write_section(OUT, BEGIN, END, "".join(lines))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
