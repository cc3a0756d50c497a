#!/usr/bin/env python3
"""Rewrite the benchmark table of README.md from docs/benchmarks.md (run after
tools/bench.py): python3 tools/readme_table.py"""
import re
doc=open('docs/benchmarks.md').read()
sec=None; T={}
for l in doc.splitlines():
    if l.startswith('## '): sec=l[3:]
    elif l.startswith('| ') and not l.startswith('| size') and not l.startswith('| case') and not l.startswith('|---'):
        c=[x.strip() for x in l.strip('|').split('|')]
        T[(sec,c[0])]=c[1:]
def g(secprefix, case):
    for (s,k),v in T.items():
        if s.startswith(secprefix) and k==case: return v
    raise KeyError((secprefix,case))
def f(x):
    x=float(x)
    return f"{x:.2f}" if x<1 else (f"{x:.1f}" if x<100 else f"{x:.0f}")
PP2='Ping-pong (COMMS1), 2 ranks'; C2='Collectives (one call; Gather, Scatter, Alltoall(v) and Allgather(v) sizes are one rank\'s block), 2 ranks'
C4='Collectives (one call; Gather, Scatter, Alltoall(v) and Allgather(v) sizes are one rank\'s block), 4 ranks'; TCP='Ping-pong (COMMS1) over TCP'
AR2='Allreduce loop, 2 ranks'; DDT='Derived datatypes'; PP4='Ping-pong (COMMS1), 4 ranks'
def row(label, items, unit=" us"):
    vals=[g(s,c) for s,c in items]
    cols=[" / ".join(f(v[i]) for v in vals)+unit for i in range(3)]
    cols.append(" / ".join(v[3] for v in vals))
    return f"| {label} | "+" | ".join(cols)+" |"
rows=[
 row("ping-pong latency, 4 B (half round trip)",[(PP2,"4 B")]),
 row("ping-pong, 16 B / 256 B",[(PP2,"16 B"),(PP2,"256 B")]),
 row("ping-pong, 64 KiB / 256 KiB",[(PP2,"64 KiB"),(PP2,"256 KiB")]),
 row("ping-pong, 4 MiB",[(PP2,"4 MiB")]),
 row("ping-pong 16 / 64 KiB, 4 ranks on 2 cores (2 in a barrier)",[(PP4,"16 KiB"),(PP4,"64 KiB")]),
 row("allreduce loop 8 B / 64 KiB, 2 ranks",[(AR2,"8 B"),(AR2,"64 KiB")]),
 row("Barrier, 2 ranks",[(C2,"barrier")]),
 row("Bcast 8 B / 1 KiB, 2 ranks",[(C2,"bcast 8 B"),(C2,"bcast 1 KiB")]),
 row("Bcast 1 MiB, 2 ranks",[(C2,"bcast 1 MiB")]),
 row("Allreduce 8 B / 1 KiB, 2 ranks",[(C2,"allreduce 8 B"),(C2,"allreduce 1 KiB")]),
 row("Allreduce 64 KiB / 1 MiB, 2 ranks",[(C2,"allreduce 64 KiB"),(C2,"allreduce 1 MiB")]),
 row("Alltoall 8 B / 1 KiB, 2 ranks",[(C2,"alltoall 8 B"),(C2,"alltoall 1 KiB")]),
 row("Allgather 64 KiB / 1 MiB, 2 ranks",[(C2,"allgather 64 KiB"),(C2,"allgather 1 MiB")]),
 row("Alltoall 64 KiB / 1 MiB, 2 ranks",[(C2,"alltoall 64 KiB"),(C2,"alltoall 1 MiB")]),
 row("Barrier, 4 ranks on 2 cores",[(C4,"barrier")]),
 row("Allgather / Allreduce / Alltoall 8 B, 4 ranks on 2 cores",[(C4,"allgather 8 B"),(C4,"allreduce 8 B"),(C4,"alltoall 8 B")]),
 row("Alltoall 64 KiB, 4 ranks on 2 cores",[(C4,"alltoall 64 KiB")]),
 row("Allreduce 1 KiB / 64 KiB / 1 MiB, 4 ranks on 2 cores",[(C4,"allreduce 1 KiB"),(C4,"allreduce 64 KiB"),(C4,"allreduce 1 MiB")]),
 row("Bcast 8 B / 64 KiB / 1 MiB, 4 ranks on 2 cores",[(C4,"bcast 8 B"),(C4,"bcast 64 KiB"),(C4,"bcast 1 MiB")]),
 row("Allgather / Alltoall 1 MiB, 4 ranks on 2 cores",[(C4,"allgather 1 MiB"),(C4,"alltoall 1 MiB")]),
 row("Gather / Scatter 8 B, 2 ranks",[(C2,"gather 8 B"),(C2,"scatter 8 B")]),
 row("Gather / Scatter 8 B, 4 ranks on 2 cores",[(C4,"gather 8 B"),(C4,"scatter 8 B")]),
 row("Alltoallv / Allgatherv 8 B, 2 ranks",[(C2,"alltoallv 8 B"),(C2,"allgatherv 8 B")]),
 row("Alltoallv / Allgatherv 8 B, 4 ranks on 2 cores",[(C4,"alltoallv 8 B"),(C4,"allgatherv 8 B")]),
 row("Scan 8 B / 64 KiB, 2 ranks",[(C2,"scan 8 B"),(C2,"scan 64 KiB")]),
 row("Scan 8 B / 64 KiB, 4 ranks on 2 cores",[(C4,"scan 8 B"),(C4,"scan 64 KiB")]),
 row("TCP ping-pong latency, 4 B (loopback)",[(TCP,"4 B")]),
 row("TCP ping-pong, 64 KiB / 256 KiB",[(TCP,"64 KiB"),(TCP,"256 KiB")]),
 row("TCP ping-pong, 1 MiB / 4 MiB / 16 MiB",[(TCP,"1 MiB"),(TCP,"4 MiB"),(TCP,"16 MiB")]),
 row("3-D face (subarray) ping-pong",[(DDT,"subarray face pingpong")]),
 row("irregular indexed: ping-pong / MPI_Pack",[(DDT,"indexed irregular pingpong"),(DDT,"indexed irregular pack")]),
]
p='README.md'; s=open(p).read()
a=s.index('| measure | oxmpi | MPICH | Open MPI | ratio |')
b=s.index('These figures are from one')
s=s[:a]+"| measure | oxmpi | MPICH | Open MPI | ratio |\n|---|---|---|---|---|\n"+"\n".join(rows)+"\n\n"+s[b:]
open(p,'w').write(s)
