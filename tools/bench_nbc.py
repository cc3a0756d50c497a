#!/usr/bin/env python3
"""Nonblocking and persistent collectives (c-tests/bench/nbc.c), each
started and waited at once, on oxmpi, MPICH and Open MPI at 2 and 4 ranks,
interleaved round by round; the best of the rounds goes into
docs/benchmarks.md (between its NBC markers; tools/bench.py keeps them).

  tools/bench_nbc.py [--rounds 5] [--allow-busy]
"""
import argparse
import os

from bench import IMPLS, OUT, build_program, library_rev, measure, refuse_if_busy, round_order, table, write_section

BEGIN = "<!-- BEGIN NBC (tools/bench_nbc.py) -->\n"
END = "<!-- END NBC -->\n"
# (ranks, quick): at 4 ranks on 2 cores each case runs for less time
RUNS = [(2, False), (4, True)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--allow-busy", action="store_true", help="run even while other work keeps the CPUs busy")
    a = ap.parse_args()
    build_program("nbc")
    refuse_if_busy(a.allow_busy)
    best, every = {}, {}
    for rnd in range(a.rounds):
        for n, quick in RUNS:
            for impl in round_order(rnd, IMPLS):
                measure(best, every, rnd, impl, "nbc", n, quick)
    lines = [BEGIN, "## Nonblocking and persistent collectives\n", "\n",
             f"`python3 tools/bench_nbc.py --rounds {a.rounds}`: `c-tests/bench/nbc.c`, each call started and waited "
             "at once (Ialltoall and Iallgather sizes are one rank's block; `iallreduce dup` is on a duplicate "
             "of `MPI_COMM_WORLD`, the rest on the world itself; the persistent ones are MPI 4's "
             "`MPI_Allreduce_init` and `MPI_Bcast_init` (Open MPI 4's `MPIX_` ones), made once, then `MPI_Start` "
             "and `MPI_Wait` each time, and `allreduce init free` is an `MPI_Allreduce_init` made, started, "
             "waited and freed each time), interleaved round by round; microseconds, best of the rounds, "
             "ratios as above; "
             f"run on {library_rev()}'s library.\n"]
    for n, _ in RUNS:
        over = " (oversubscribed: 4 ranks on 2 cores)" if n > os.cpu_count() else ""
        lines += ["\n", f"### {n} ranks{over}\n", "\n"]
        lines += [r + "\n" for r in table(best, every, ("nbc", n, False))]
    lines.append(END)
    write_section(OUT, BEGIN, END, "".join(lines))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
