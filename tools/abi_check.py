#!/usr/bin/env python3
"""ABI check: every MPI_* constant, handle size and MPI_Status offset of
MPICH's mpi.h must have the same value in ours.

The list of names comes from MPICH's installed header (libmpich-dev), so a
constant we forget is reported rather than silently skipped. One C program
prints every value; it is compiled once against each header and the outputs
are compared line by line.

  tools/abi_check.py [--ours include] [--mpich DIR] [--dump]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

MPICH_INC = "/usr/include/x86_64-linux-gnu/mpich"

# Names that are not values: struct fields, include guards, and MPICH's
# private QMPI tool enum (names ending in _T).
NOT_VALUES = re.compile(r"^(MPI_(ERROR|SOURCE|TAG)|MPI_INCLUDED|MPI_PROTO_H_INCLUDED|"
                        r"MPI_FILE_DEFINED|MPIO_.*)$")
# MPICH's QMPI enum names every function as MPI_<NAME>_T; it is not MPI's.
QMPI = re.compile(r"^MPIX?_[A-Z0-9_]+_T$")
# Names bound to link-time addresses (data symbols, callbacks): they must
# exist, but their value is an address that differs from library to library.
ADDRESSES = {"MPI_F_STATUS_IGNORE", "MPI_F_STATUSES_IGNORE", "MPI_F08_STATUS_IGNORE",
             "MPI_F08_STATUSES_IGNORE", "MPI_UNWEIGHTED", "MPI_WEIGHTS_EMPTY",
             "MPI_DUP_FN", "MPI_COMM_DUP_FN", "MPI_TYPE_DUP_FN", "MPI_WIN_DUP_FN",
             "MPI_T_PVAR_ALL_HANDLES"}
STRINGS = {"MPI_AINT_FMT_DEC_SPEC", "MPI_AINT_FMT_HEX_SPEC"}
TYPES = ["MPI_Datatype", "MPI_Comm", "MPI_Group", "MPI_Win", "MPI_Session", "MPI_File",
         "MPI_Op", "MPI_Errhandler", "MPI_Request", "MPI_Message", "MPI_Info", "MPI_Aint",
         "MPI_Fint", "MPI_Count", "MPI_Offset", "MPI_Status", "MPI_T_enum",
         "MPI_T_cvar_handle", "MPI_T_pvar_handle", "MPI_T_pvar_session"]
FIELDS = ["count_lo", "count_hi_and_cancelled", "MPI_SOURCE", "MPI_TAG", "MPI_ERROR"]


def mpich_names(mpich_inc):
    """Every all-capitals MPI_/MPIX_ identifier MPICH's header defines or uses."""
    src = '#include <mpi.h>\n'
    macros = subprocess.run(["gcc", "-I", mpich_inc, "-dM", "-E", "-x", "c", "-"], input=src,
                            capture_output=True, text=True, check=True).stdout
    pre = subprocess.run(["gcc", "-I", mpich_inc, "-E", "-x", "c", "-"], input=src,
                         capture_output=True, text=True, check=True).stdout
    names = set(re.findall(r"^#define (MPIX?_[A-Z0-9][A-Z0-9_]*) ", macros, re.M))
    names |= {n for n in re.findall(r"\b(MPIX?_[A-Z0-9][A-Z0-9_]*)\b", pre) if not QMPI.match(n)}
    # function-like macros (MPI_Comm_c2f) are mixed case and never match
    return sorted(n for n in names if not NOT_VALUES.match(n))


def printer(names):
    out = ["#include <mpi.h>", "#include <stdio.h>", "#include <stddef.h>", "#include <stdint.h>",
           "int main(void) {"]
    for n in names:
        if n in ADDRESSES:
            # sizeof checks the declaration without needing the symbol at link time
            out.append(f'  printf("{n} declared, size %zu\\n", sizeof({n}));')
        elif n in STRINGS:
            out.append(f'  printf("{n} %s\\n", {n});')
        else:
            out.append(f'  printf("{n} %lld\\n", (long long)(intptr_t)({n}));')
    for t in TYPES:
        out.append(f'  printf("sizeof({t}) %zu\\n", sizeof({t}));')
    for f in FIELDS:
        out.append(f'  printf("offsetof(MPI_Status, {f}) %zu\\n", offsetof(MPI_Status, {f}));')
    out.append("  return 0;\n}")
    return "\n".join(out) + "\n"


def run(inc, src, tmp, tag):
    exe = os.path.join(tmp, "abi_" + tag)
    r = subprocess.run(["gcc", "-std=c11", "-w", "-I", inc, "-o", exe, src],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"abi_check: printer does not compile against {inc}:\n{r.stderr[:4000]}")
    return subprocess.run([exe], capture_output=True, text=True, check=True).stdout.splitlines()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", default=os.path.join(os.path.dirname(__file__), "..", "include"))
    ap.add_argument("--mpich", default=MPICH_INC)
    ap.add_argument("--dump", action="store_true", help="print MPICH's values and stop")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.mpich, "mpi.h")):
        sys.exit(f"abi_check: MPICH's header not found in {a.mpich} (apt-get install libmpich-dev)")
    names = mpich_names(a.mpich)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "abi.c")
        with open(src, "w") as f:
            f.write(printer(names))
        theirs = run(a.mpich, src, tmp, "mpich")
        if a.dump:
            print("\n".join(theirs))
            return
        ours = run(a.ours, src, tmp, "oxmpi")
    diffs = [(t, o) for t, o in zip(theirs, ours) if t != o]
    for t, o in diffs:
        print(f"  MPICH: {t:60} oxmpi: {o}")
    print(f"abi_check: {len(theirs)} values compared, {len(diffs)} differences")
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
