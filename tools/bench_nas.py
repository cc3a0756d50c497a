#!/usr/bin/env python3
"""The NAS-style kernels (c-tests/bench/nas) on oxmpi, MPICH and Open MPI.

  tools/bench_nas.py --check          build class S with oxmpi's mpicc, run
                                      each kernel at 1, 2 and 4 ranks, and
                                      require VERIFICATION SUCCESSFUL (and
                                      the CPU-in-MPI line of one run with
                                      the profiling library loaded)
  tools/bench_nas.py [--rounds N]     build class A with each MPI's mpicc,
                                      run every kernel at 2 and 4 ranks,
                                      the implementations interleaved, and
                                      write the best time and Mop/s of each
                                      with ratios into docs/benchmarks.md,
                                      and the share of the ranks' CPU time
                                      spent inside MPI calls (measured by
                                      c-tests/bench/nas/mpicpu.c, loaded
                                      ahead of each MPI)
  tools/bench_nas.py --kernels cg --ranks 2 --rounds 30
                                      the same for some kernels or rank
                                      counts only (many rounds of one case
                                      narrow its paired ratio); the table
                                      is printed, and written only where
                                      --out says
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys

from bench import OUT, median_ratio, refuse_if_busy, round_order, write_section

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAS = os.path.join(ROOT, "c-tests", "bench", "nas")
BUILD = os.path.join(ROOT, "build")
KERNELS = ["ep", "is", "cg", "mg", "ft"]
IMPLS = {
    "oxmpi": (os.path.join(BUILD, "bin", "mpicc"), [os.path.join(BUILD, "bin", "mpiexec"), "-n"]),
    "MPICH": ("mpicc.mpich", ["mpiexec.mpich", "-n"]),
    "Open MPI": ("mpicc.openmpi", ["mpirun.openmpi", "--oversubscribe", "--bind-to", "none", "-n"]),
}
BEGIN = "<!-- BEGIN NAS (tools/bench_nas.py) -->\n"
END = "<!-- END NAS -->\n"


def build(impl, cls):
    out = os.path.join(NAS, "bin", impl.replace(" ", "_"))
    os.makedirs(out, exist_ok=True)
    for k in KERNELS:
        subprocess.run([IMPLS[impl][0], "-O2", f"-DCLASS={cls}", "-o", os.path.join(out, f"{k}.{cls}"),
                        os.path.join(NAS, f"{k}.c"), "-lm"], check=True)
    # the profiling library that measures the CPU time spent inside MPI
    subprocess.run([IMPLS[impl][0], "-O2", "-shared", "-fPIC", "-o", os.path.join(out, "mpicpu.so"),
                    os.path.join(NAS, "mpicpu.c")], check=True)
    return out


def run(impl, exe, n, profile=None):
    """Whether `exe` ran at `n` ranks and verified, its time, its Mop/s,
    the share of its ranks' CPU time spent inside MPI (with `profile`, the
    mpicpu library loaded ahead of the MPI; else None), and its output."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    prog = ["env", f"LD_PRELOAD={profile}", exe] if profile else [exe]
    r = subprocess.run(IMPLS[impl][1] + [str(n)] + prog, capture_output=True, text=True, env=env, timeout=600)
    t = re.search(r"Time in seconds =\s*([\d.]+)", r.stdout)
    m = re.search(r"Mop/s total     =\s*([\d.]+)", r.stdout)
    c = re.search(r"MPI CPU seconds = ([\d.]+) of ([\d.]+)", r.stdout)
    ok = r.returncode == 0 and "VERIFICATION SUCCESSFUL" in r.stdout
    share = float(c.group(1)) / float(c.group(2)) if c and float(c.group(2)) > 0 else None
    return ok, (float(t.group(1)) if t else None), (float(m.group(1)) if m else None), share, r.stdout + r.stderr


def check():
    out = build("oxmpi", "S")
    failed = 0
    for k in KERNELS:
        for n in (1, 2, 4):
            ok, _, _, _, text = run("oxmpi", os.path.join(out, f"{k}.S"), n)
            print(f"{'ok  ' if ok else 'FAIL'} {k}.S -n {n}", flush=True)
            if not ok:
                failed += 1
                print(text[-2000:])
    # the benchmark's profiling library, loaded ahead of oxmpi, measures
    ok, _, _, share, text = run("oxmpi", os.path.join(out, "cg.S"), 2, os.path.join(out, "mpicpu.so"))
    ok = ok and share is not None and 0 < share < 1
    said = f"{share:.1%}" if share is not None else "not said"
    print(f"{'ok  ' if ok else 'FAIL'} cg.S -n 2 with mpicpu.so (CPU in MPI: {said})", flush=True)
    if not ok:
        failed += 1
        print(text[-2000:])
    print(f"{3 * len(KERNELS) + 1 - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


def paired_ratio(by_round, k, n, peer, rounds):
    """The geometric mean over the rounds of oxmpi's time over `peer`'s
    in the same round, and its standard error: "0.998 ± 0.022"
    (`by_round`: each run's time, or anything proportional to it, the
    same for all)."""
    logs = [math.log(by_round[(k, n, "oxmpi", r)] / by_round[(k, n, peer, r)]) for r in range(rounds)
            if (k, n, "oxmpi", r) in by_round and (k, n, peer, r) in by_round]
    if len(logs) < 2:
        return "-"
    mean, se = statistics.mean(logs), statistics.stdev(logs) / math.sqrt(len(logs))
    return f"{math.exp(mean):.3f} ± {math.exp(mean) * se:.3f}"


def subset(kernels, ranks):
    """The options that choose `kernels` (in KERNELS' order) at `ranks`,
    "" for every kernel at 2 and 4 ranks (the whole run)."""
    if kernels == KERNELS and sorted(ranks) == [2, 4]:
        return ""
    return f" --kernels {','.join(kernels)} --ranks {','.join(map(str, ranks))}"


def bench(rounds, cls, out_path, kernels=KERNELS, ranks=(2, 4)):
    dirs = {i: build(i, cls) for i in IMPLS}
    best, times, shares, by_round = {}, {}, {}, {}
    for rnd in range(rounds):
        for k in kernels:
            for n in ranks:
                for impl in round_order(rnd, IMPLS):
                    exe, profile = os.path.join(dirs[impl], f"{k}.{cls}"), os.path.join(dirs[impl], "mpicpu.so")
                    ok, t, m, share, text = run(impl, exe, n, profile)
                    in_mpi = f", {share:.1%} of CPU in MPI" if share is not None else ""
                    print(f"round {rnd + 1}: {impl:9} {k}.{cls} -n {n}: "
                          f"{f'{t:.2f} s, {m:.1f} Mop/s{in_mpi}' if ok else 'FAILED'}", flush=True)
                    if not ok:
                        sys.stderr.write(text[-1500:])
                        continue
                    key = (k, n, impl)
                    times.setdefault(key, []).append(t)
                    if m:
                        # (by the Mop/s, which have more digits than the time)
                        by_round[(k, n, impl, rnd)] = 1 / m
                    if share is not None:
                        shares.setdefault(key, []).append(share)
                    if key not in best or t < best[key][0]:
                        best[key] = (t, m)
    chosen = subset(kernels, ranks) + ("" if cls == "A" else f" --class {cls}")
    lines = [BEGIN, f"### NAS-style kernels, class {cls}\n\n",
             f"`python3 tools/bench_nas.py --rounds {rounds}{chosen}`: best of {rounds} interleaved rounds, each started by the next implementation; kernels in "
             "`c-tests/bench/nas` built with each MPI's `mpicc -O2`; every run verified. Ratio: oxmpi's time over "
             "the better peer's, from their Mop/s (below 1: oxmpi faster). Spread: each one's slowest round "
             "over its fastest (oxmpi / MPICH / Open MPI), which shows how much this virtual machine varies "
             "from run to run. Median ratio: oxmpi's median time over the better peer's median, which one lucky "
             "round moves less than the best. CPU in MPI: the share of the ranks' CPU time (from MPI_Init to "
             "MPI_Finalize) spent inside MPI calls, median over the rounds (oxmpi / MPICH / Open MPI), measured "
             "by `c-tests/bench/nas/mpicpu.c` (a PMPI profiling library built with each MPI and loaded ahead of "
             "it): the kernels' compute is the same code on all three, so this is what each library costs the "
             "processors, waiting included, with less of the machine's noise than the times. Paired ratio: "
             "the geometric mean, over the rounds, of oxmpi's time over each peer's in the same round (against "
             "MPICH / Open MPI), with its standard error: the runs of one round follow one another, so the "
             "machine's slow and fast spells, which last longer than a round, fall on both sides of each ratio; "
             "the best and the median of each one's times do not pair them.\n\n",
             "| kernel | ranks | oxmpi s (Mop/s) | MPICH s (Mop/s) | Open MPI s (Mop/s) | ratio | median ratio | paired ratio "
             "| spread | CPU in MPI |\n",
             "|---|---|---|---|---|---|---|---|---|---|\n"]
    for k in kernels:
        for n in ranks:
            cells, rate = [], {}
            for impl in IMPLS:
                v = best.get((k, n, impl))
                cells.append(f"{v[0]:.3f} ({v[1]:.1f})" if v else "failed")
                if v:
                    rate[impl] = v[1]
            peers = [rate[i] for i in ("MPICH", "Open MPI") if i in rate]
            # time ratio, from the rates (more digits than the times)
            ratio = f"{max(peers) / rate['oxmpi']:.3f}" if "oxmpi" in rate and peers else "-"
            m = median_ratio({i: times.get((k, n, i)) for i in IMPLS})
            med_ratio = f"{m:.3f}" if m else "-"
            spread = " / ".join(f"{max(ts) / min(ts):.2f}" if (ts := times.get((k, n, impl))) else "-" for impl in IMPLS)
            in_mpi = " / ".join(f"{statistics.median(sh):.1%}" if (sh := shares.get((k, n, impl))) else "-"
                                for impl in IMPLS)
            paired = " / ".join(paired_ratio(by_round, k, n, peer, rounds) for peer in ("MPICH", "Open MPI"))
            lines.append(f"| {k.upper()} | {n} | {' | '.join(cells)} | {ratio} | {med_ratio} | {paired} | {spread} "
                         f"| {in_mpi} |\n")
    lines.append(END)
    if out_path:
        write_section(out_path, BEGIN, END, "".join(lines))
    print("".join(lines))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--class", dest="cls", default="A")
    ap.add_argument("--out", help=f"the file whose NAS section the table replaces (default: {OUT}, for every "
                    "kernel at 2 and 4 ranks; none for fewer)")
    ap.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated, of " + ",".join(KERNELS))
    ap.add_argument("--ranks", default="2,4", help="comma-separated rank counts")
    ap.add_argument("--allow-busy", action="store_true", help="run even while other work keeps the CPUs busy")
    a = ap.parse_args()
    kernels = [k for k in a.kernels.split(",") if k]
    if not kernels or any(k not in KERNELS for k in kernels):
        ap.error(f"--kernels: each of {','.join(KERNELS)}")
    try:
        ranks = [int(n) for n in a.ranks.split(",") if n]
    except ValueError:
        ranks = []
    if not ranks or any(n < 1 for n in ranks):
        ap.error("--ranks: rank counts such as 2,4")
    # (in KERNELS' order, so that a whole run's table reads as always)
    kernels = [k for k in KERNELS if k in kernels]
    if a.check:
        check()
    else:
        refuse_if_busy(a.allow_busy)
        bench(a.rounds, a.cls, a.out or (None if subset(kernels, ranks) else OUT), kernels, ranks)


if __name__ == "__main__":
    main()
