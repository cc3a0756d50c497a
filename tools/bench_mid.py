#!/usr/bin/env python3
"""Collectives of mid-size blocks among more ranks than cores
(c-tests/bench/coll.c with blocks of 2 and 8 KiB, and c-tests/bench/ragged.c's
Allgatherv and Alltoallv of blocks of their own sizes, at 4 and 8 ranks on
this 2-core machine), where an Alltoall's blocks for the others fit one
long mailbox slot: oxmpi, MPICH and Open MPI interleaved round by round;
the best of the rounds goes into docs/benchmarks.md (between its MID
markers; tools/bench.py keeps them).

  tools/bench_mid.py [--rounds 3] [--allow-busy]
"""
import argparse

from bench import IMPLS, OUT, build_program, library_rev, measure, refuse_if_busy, round_order, rows, table, write_section

BEGIN = "<!-- BEGIN MID (tools/bench_mid.py) -->\n"
END = "<!-- END MID -->\n"
RANKS = [4, 8]
SIZES = ["2048", "8192"]
UNITS = ["1024", "4096"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--allow-busy", action="store_true", help="run even while other work keeps the CPUs busy")
    a = ap.parse_args()
    build_program("coll")
    build_program("ragged")
    refuse_if_busy(a.allow_busy)
    best, every = {}, {}
    for rnd in range(a.rounds):
        for n in RANKS:
            for impl in round_order(rnd, IMPLS):
                measure(best, every, rnd, impl, "coll", n, True, args=SIZES)
                measure(best, every, rnd, impl, "ragged", n, False, args=UNITS)
    lines = [BEGIN, "## Collectives of 2 and 8 KiB blocks, more ranks than cores\n", "\n",
             f"`python3 tools/bench_mid.py --rounds {a.rounds}`: `c-tests/bench/coll.c quick 2048 8192` (sizes are "
             "one rank's block, or the whole buffer for Bcast, Allreduce and Scan), interleaved round by round; "
             "microseconds, best of the rounds, ratios as above. Here an Alltoall's blocks for the others fit one "
             "32 KiB mailbox slot, one publication a rank, and so do an Alltoallv's beyond its short publication "
             "with the tables (but at 8 ranks, 8 KiB). The ragged rows are `c-tests/bench/ragged.c 1024 4096`: "
             "an Allgatherv whose rank r's part is r + 1 units, an Alltoallv whose rank s's block for rank r is "
             "1 + (s + r) % 3 units (unit 1 or 4 KiB). "
             f"Run on {library_rev()}'s library.\n"]
    for n in RANKS:
        lines += ["\n", f"### {n} ranks on 2 cores\n", "\n"]
        lines += [r + "\n" for r in table(best, every, ("coll", n, False)) + rows(best, every, ("ragged", n, False))]
    lines.append(END)
    write_section(OUT, BEGIN, END, "".join(lines))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
