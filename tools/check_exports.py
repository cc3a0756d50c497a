#!/usr/bin/env python3
"""Only the ABI is exported: every dynamic symbol libmpi.so defines must be
an MPI name that MPICH's libmpich.so.12 also exports, and every MPI_X must
have its PMPI_X twin.

  tools/check_exports.py build/lib/libmpi.so.12
"""
import subprocess
import sys

MPICH_LIB = "/usr/lib/x86_64-linux-gnu/libmpich.so.12"

# MPI 4.1 functions oxmpi provides beyond MPICH 4's ABI (declared in our
# mpi.h too): a program built against MPICH never references them.
BEYOND_MPICH4 = {f"{p}MPI_Remove_error_{w}" for p in ("", "P") for w in ("class", "code", "string")}


def defined(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if len(line.split()) >= 3}


def main():
    ours = defined(sys.argv[1])
    theirs = defined(MPICH_LIB)
    foreign = sorted(s for s in ours if s not in theirs and s not in BEYOND_MPICH4)
    # functions have mixed-case names; data symbols are all capitals
    unpaired = sorted(s for s in ours if s.startswith("MPI_") and not s.isupper() and "P" + s not in ours)
    for s in foreign:
        print(f"  exported but not part of MPICH's ABI: {s}")
    for s in unpaired:
        print(f"  exported without its profiling twin: {s} (no P{s})")
    print(f"check_exports: {len(ours)} symbols exported, {len(foreign)} outside the ABI, {len(unpaired)} without PMPI twin")
    sys.exit(1 if foreign or unpaired else 0)


if __name__ == "__main__":
    main()
