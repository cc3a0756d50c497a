#!/usr/bin/env python3
"""Collectives and NAS CG on a machine whose cores other programs keep
busy: oxmpi, MPICH and Open MPI run c-tests/bench/coll.c (8-byte and
1 KiB calls) at 2 and 4 ranks and the NAS-style CG (class A) at 4 ranks
beside one busy loop per CPU, interleaved round by round; the best of the
rounds goes into docs/benchmarks.md (between its LOADED markers;
tools/bench.py keeps them).

  tools/bench_loaded.py [--rounds 3] [--loops N] [--allow-busy]
"""
import argparse
import os
import subprocess

import bench_nas
from bench import (IMPLS, OUT, build_program, library_rev, measure, record, refuse_if_busy, round_order, table,
                   write_section)

BEGIN = "<!-- BEGIN LOADED (tools/bench_loaded.py) -->\n"
END = "<!-- END LOADED -->\n"
RANKS = [2, 4]
SIZES = ["8", "1024"]


def busy_loops(n):
    """`n` processes that compute for ever (each one a CPU's worth)."""
    return [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--loops", type=int, default=os.cpu_count(), help="busy loops beside the runs (default: one per CPU)")
    ap.add_argument("--allow-busy", action="store_true", help="run even while other work keeps the CPUs busy")
    a = ap.parse_args()
    build_program("coll")
    cg = {impl: os.path.join(bench_nas.build(impl, "A"), "cg.A") for impl in IMPLS}
    refuse_if_busy(a.allow_busy)
    best, every = {}, {}
    loops = busy_loops(a.loops)
    try:
        for rnd in range(a.rounds):
            for n in RANKS:
                for impl in round_order(rnd, IMPLS):
                    measure(best, every, rnd, impl, "coll", n, True, args=SIZES)
            for impl in round_order(rnd, IMPLS):
                ok, t, _, _, out = bench_nas.run(impl, cg[impl], 4)
                print(f"round {rnd + 1}: {impl:9} cg.A -n 4: {t} s{'' if ok else ' FAILED'}", flush=True)
                record(best, every, ("cg", 4, impl, False), {"NAS CG class A, s": t} if ok and t else None)
    finally:
        for p in loops:
            p.kill()
            p.wait()
    lines = [BEGIN, "## Beside other programs that keep every core busy\n", "\n",
             f"`python3 tools/bench_loaded.py --rounds {a.rounds}`: {a.loops} busy loops (`sh -c 'while :; do :; "
             "done'`, one per CPU) run throughout; beside them `c-tests/bench/coll.c quick 8 1024` at 2 and 4 ranks "
             "and NAS-style CG class A at 4 ranks (its time in seconds), interleaved round by round; microseconds, "
             "best of the rounds, ratios as above. A rank that yields its core here hands it to a busy loop for the "
             "rest of its time slice: where the loops fill every CPU, oxmpi's waits sleep on their doorbells "
             "instead (woken and run as soon as a peer rings). "
             f"Run on {library_rev()}'s library.\n"]
    for n in RANKS:
        lines += ["\n", f"### {n} ranks on 2 cores\n", "\n"]
        lines += [r + "\n" for r in table(best, every, ("coll", n, False))]
    lines += ["\n", "### NAS CG, 4 ranks on 2 cores\n", "\n"]
    lines += [r + "\n" for r in table(best, every, ("cg", 4, False), first="kernel")]
    lines.append(END)
    write_section(OUT, BEGIN, END, "".join(lines))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
