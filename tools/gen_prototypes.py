#!/usr/bin/env python3
"""Generate the C prototypes of include/mpi.h from the MPI Forum's
machine-readable API (PyPI package pympistandard).

Every ISO C procedure of the standard, and its large-count `_c` twin, is
declared twice: MPI_X and the profiling name PMPI_X. Procedures newer than
MPICH 4 (which oxmpi's ABI follows) are left out, and the few MPI-1 functions
MPICH still declares, although the standard removed them, are added.

  tools/gen_prototypes.py           rewrite the block in include/mpi.h
  tools/gen_prototypes.py --check   exit 1 if the committed block is stale
"""
import os
import re
import sys

import pympistandard as std

HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "include", "mpi.h")
BEGIN = "/* BEGIN GENERATED PROTOTYPES (tools/gen_prototypes.py; do not edit) */\n"
END = "/* END GENERATED PROTOTYPES */\n"

# In the MPI 4.1/5.0 standard but not in MPICH 4's mpi.h.
NEWER_THAN_MPICH4 = re.compile(
    r"^MPI_(Abi_.*|.*_(toint|fromint)|Buffer_i?flush|(Comm|Session)_(attach|detach|i?flush)_buffer(_c)?|"
    r"Get_hw_resource_info|Request_get_status_(all|any|some)|"
    r"Status_(get|set)_(error|source|tag)|Status_set_elements_c|Type_get_value_index)$")
# MPICH defines these as macros (handles are ints), so they are not functions.
C2F_MACROS = re.compile(r"^MPI_(Comm|Errhandler|Group|Info|Message|Op|Request|Session|Type|Win)_(c2f|f2c)$")

# Removed from the standard in MPI-3.0 but still declared by MPICH 4.
REMOVED_STILL_DECLARED = [
    "int MPI_Address(void *location, MPI_Aint *address)",
    "int MPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)",
    "int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)",
    "int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)",
    "int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)",
    "int MPI_Type_hindexed(int count, int *array_of_blocklengths, "
    "MPI_Aint *array_of_displacements, MPI_Datatype oldtype, MPI_Datatype *newtype)",
    "int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, "
    "MPI_Datatype *newtype)",
    "int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)",
    "int MPI_Type_struct(int count, int *array_of_blocklengths, MPI_Aint *array_of_displacements, "
    "MPI_Datatype *array_of_types, MPI_Datatype *newtype)",
    "int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)",
]


def prototypes():
    std.use_api_version(1)
    found = {}
    for p in std.all_iso_c_procedures():
        for c in (p.express.iso_c, p.express.embiggen and p.express.embiggen.iso_c):
            if c is not None:
                found[c.name] = str(c)
    keep = {n: s for n, s in found.items()
            if not NEWER_THAN_MPICH4.match(n) and not C2F_MACROS.match(n)}
    for s in REMOVED_STILL_DECLARED:
        keep[re.search(r"(MPI_\w+)\(", s).group(1)] = s
    return [keep[n] for n in sorted(keep, key=str.lower)]


def block():
    lines = [BEGIN]
    for s in prototypes():
        s = s.replace("* ", " *").replace("\\ldots", "...")  # LaTeX leftovers
        s = s.replace("char argv[]", "char *argv[]")  # MPI_Info_create_env, as MPICH declares it
        lines.append(s + ";\n")
        lines.append(s.replace(" MPI_", " PMPI_", 1) + ";\n")
    lines.append(END)
    return "".join(lines)


def main():
    text = open(HEADER).read()
    i, j = text.index(BEGIN), text.index(END) + len(END)
    new = text[:i] + block() + text[j:]
    if "--check" in sys.argv:
        if new != text:
            sys.exit("include/mpi.h prototypes are stale: run tools/gen_prototypes.py")
        print("include/mpi.h prototypes are up to date")
        return
    open(HEADER, "w").write(new)


if __name__ == "__main__":
    main()
