#!/usr/bin/env python3
"""Generate the Fortran 77 interface from the MPI Forum's machine-readable
API (PyPI package pympistandard) and our own include/mpi.h:

  include/mpif.h             every integer constant of mpi.h as a PARAMETER
                             (same values: MPICH's ABI), the sentinels as
                             common blocks laid out as MPICH's mpif.h has them
  fortran-shim/mpi_module.f90
                             the `mpi` module (`use mpi`): mpif.h, and an
                             explicit interface, from the standard's Fortran
                             binding, for every routine libmpifort binds
                             (choice buffers take any type and rank)
  fortran-shim/mpi_sizeof.f90
                             MPI_SIZEOF, a module the mpi module uses
  fortran-shim/bindings.c    a wrapper for every MPI function libmpi exports
                             that has a Fortran binding (the few whose
                             arguments need more than a mechanical mapping
                             are written by hand in fortran-shim/special.c
                             and attr.c)

  tools/gen_fortran.py LIB          rewrite both (LIB: build/lib/libmpi.so.12)
  tools/gen_fortran.py LIB --check  exit 1 if a committed file is stale
"""
import os
import re
import subprocess
import sys

import pympistandard as std

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
MPI_H = os.path.join(ROOT, "include", "mpi.h")
MPICH_MPIF_H = "/usr/include/x86_64-linux-gnu/mpich/mpif.h"
MPIF_H = os.path.join(ROOT, "include", "mpif.h")
BINDINGS = os.path.join(ROOT, "fortran-shim", "bindings.c")
MODULE = os.path.join(ROOT, "fortran-shim", "mpi_module.f90")
SIZEOF = os.path.join(ROOT, "fortran-shim", "mpi_sizeof.f90")
HAND_FILES = ["special.c", "attr.c"]

HANDLES = {"MPI_Comm", "MPI_Datatype", "MPI_Group", "MPI_Info", "MPI_Op", "MPI_Errhandler", "MPI_Request",
           "MPI_Message", "MPI_Win", "MPI_File", "MPI_Session"}
WIDE = {"MPI_Aint", "MPI_Offset", "MPI_Count"}

# Predefined attribute keys whose Fortran value is the C value plus one
# (MPICH's ABI): getting one from Fortran yields the attribute's value.
FORTRAN_ATTRIBUTES = {"MPI_TAG_UB", "MPI_HOST", "MPI_IO", "MPI_WTIME_IS_GLOBAL", "MPI_UNIVERSE_SIZE",
                      "MPI_LASTUSEDCODE", "MPI_APPNUM", "MPI_WIN_BASE", "MPI_WIN_SIZE", "MPI_WIN_DISP_UNIT",
                      "MPI_WIN_CREATE_FLAVOR", "MPI_WIN_MODEL"}


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if len(line.split()) >= 3}


def hand_written():
    """Functions special.c and attr.c bind themselves (they say so with
    OXF_HAND(MPI_X))."""
    text = "".join(open(os.path.join(ROOT, "fortran-shim", f)).read() for f in HAND_FILES)
    return set(re.findall(r"OXF_HAND\((MPI_\w+)\)", text))


def param(p, info=False):
    """How one C parameter crosses from Fortran: (declaration in the
    wrapper, C argument, statements before the call, statements after it,
    the hidden length's name for a CHARACTER argument or None). `info`: a
    parameter of an MPI_Info_* function, whose keys and values lose their
    leading blanks too."""
    t, name, array = p.type.replace("const ", ""), p.name, bool(p.array)
    base = t.rstrip("*")
    if p.kind.name == "BUFFER" and t == "void*":
        return f"void *{name}", f"oxf_buf({name})", [], [], None
    if base == "MPI_Status":
        return f"MPI_Fint *{name}", f"{'oxf_statuses' if array else 'oxf_status'}({name})", [], [], None
    if p.kind.name == "WEIGHT":
        return f"MPI_Fint *{name}", f"oxf_weights({name})", [], [], None
    if base == "char":
        n = f"{name}_len"
        if p.direction.name == "IN":
            conv = "oxf_cstr_info" if info else "oxf_cstr"
            return f"char *{name}", f"c_{name}", [f"char *c_{name} = {conv}({name}, {n});"], [f"free(c_{name});"], n
        return (f"char *{name}", f"c_{name}", [f"char *c_{name} = oxf_out({n});"],
                [f"oxf_fstr(c_{name}, {name}, {n});", f"free(c_{name});"], n)
    if base in HANDLES or base == "int" or base in WIDE:
        ftype = base if base in WIDE else "MPI_Fint"
        if p.array and p.array.count("[") > 1:  # int ranges[][3]
            return f"{ftype} *{name}", f"({base} (*){p.array[2:]}){name}", [], [], None
        cast = ftype != base and base != "int"  # handles: int in both, cast for the C type
        if t.endswith("*") or array:
            return f"{ftype} *{name}", f"({base} *){name}" if cast else name, [], [], None
        return f"{ftype} *{name}", f"({base})*{name}" if cast else f"*{name}", [], [], None
    if p.kind.name in ("FUNCTION", "POLYFUNCTION"):
        # the Fortran procedures take every argument by reference, as the
        # C callback types of these functions do (handlers, user ops)
        return f"{t} {name}", name, [], [], None
    if t == "void*":
        return f"void *{name}", name, [], [], None
    raise ValueError(f"no Fortran mapping for {t} {name} ({p.kind.name})")


def wrapper(c):
    decls, args, before, after, hidden = [], [], [], [], []
    for p in c.parameters:
        d, a, b, af, n = param(p, c.name.startswith("MPI_Info_"))
        decls.append(d)
        args.append(a)
        before += b
        after += af
        if n:
            hidden.append(f"size_t {n}")
    lower = c.name.lower()
    out = []
    for prefix in ("", "P"):
        impl = f"oxf_{prefix.lower()}{lower}"
        sig = ", ".join(decls + ["MPI_Fint *ierr"] + hidden)
        out.append(f"void {impl}({sig})\n{{\n")
        for s in before:
            out.append(f"    {s}\n")
        out.append(f"    *ierr = {prefix}{c.name}({', '.join(args)});\n")
        for s in after:
            out.append(f"    {s}\n")
        out.append("}\n")
        out.append(f"OXF_NAMES({impl}, {prefix.lower()}{lower}, {prefix}{c.name.upper()})\n\n")
    return "".join(out)


def bindings(lib):
    ours = exported(lib)
    hand = hand_written()
    std.use_api_version(1)
    procs = []
    for p in std.all_iso_c_procedures():
        c = p.express.iso_c
        if c is None or c.name not in ours or c.name in hand or p.express.f90 is None:
            continue
        if re.search(r"_(c2f|f2c|c2f08|f082c|f082f|f2f08)$", c.name) or c.name.startswith("MPI_T_"):
            continue
        procs.append(c)
    procs.sort(key=lambda c: c.name.lower())
    head = ("/* Generated by tools/gen_fortran.py from the MPI standard's API and the\n"
            " * functions libmpi exports; do not edit. */\n"
            "#include <stdlib.h>\n#include \"oxf.h\"\n\n")
    return head + "".join(wrapper(c) for c in procs), [c.name for c in procs]


def constants():
    """Every integer constant mpi.h defines, by name (aliases resolved)."""
    raw = {}
    text = open(MPI_H).read()
    for m in re.finditer(r"^#define\s+(MPI_\w+)\s+(.+?)\s*(?:/\*.*)?$", text, re.M):
        raw[m.group(1)] = m.group(2)
    val = {}

    def value(name, depth=0):
        if name in val or depth > 5:
            return val.get(name)
        s = raw.get(name)
        if s is None:
            return None
        m = re.fullmatch(r"\(*(?:\((?:MPI_(?:\w+))\))?\(?(-?(?:0x[0-9a-fA-F]+|\d+))\)*", s)
        if m:
            v = int(m.group(1), 0)
            v = v - (1 << 32) if v >= 1 << 31 else v
            val[name] = v
            return v
        m = re.fullmatch(r"\(*(?:\((?:MPI_\w+)\))?(MPI_\w+)\)*", s)
        if m:
            v = value(m.group(1), depth + 1)
            if v is not None:
                val[name] = v
            return v
        return None

    for n in raw:
        value(n)
    # the enums of mpi.h (topologies, combiners, window flavors and models)
    for body in re.findall(r"^enum oxmpi_(?:topology_kind|combiner|win_flavor|win_model)\s*\{(.*?)\}", text, re.S | re.M):
        for name, v in re.findall(r"(MPI_\w+)\s*=\s*(\d+)", body):
            val[name] = int(v)
    skip = re.compile(r"^MPI_(T_|F_|.*_(FN|FUNCTION)$|BOTTOM|IN_PLACE|STATUS(ES)?_IGNORE|ERRCODES_IGNORE|"
                      r"ARGVS?_NULL|UNWEIGHTED|WEIGHTS_EMPTY)")
    out = {n: v for n, v in val.items() if not skip.match(n)}
    for n in out:
        if n.startswith("MPI_MAX_") and n.endswith(("_STRING", "_NAME", "_KEY", "_VAL")):
            out[n] -= 1  # a Fortran string has no terminating NUL
        if n in FORTRAN_ATTRIBUTES:
            out[n] += 1  # the Fortran twin of the key: its value, not a pointer to it
    return out


def mpif():
    c = constants()
    fortran_only = {"MPI_ADDRESS_KIND": 8, "MPI_OFFSET_KIND": 8, "MPI_COUNT_KIND": 8, "MPI_INTEGER_KIND": 4,
                    "MPI_STATUS_SIZE": 5, "MPI_SOURCE": 3, "MPI_TAG": 4, "MPI_ERROR": 5}
    lines = ["! oxmpi's Fortran 77 interface (MPICH's ABI: the values are those of",
             "! mpi.h). Generated by tools/gen_fortran.py; do not edit.",
             "!"]
    for n, v in sorted(fortran_only.items()) + sorted((n, v) for n, v in c.items() if n not in fortran_only):
        lines.append(f"      INTEGER {n}")
        lines.append(f"      PARAMETER ({n}={v})")
    lines += [
        "      LOGICAL MPI_SUBARRAYS_SUPPORTED",
        "      PARAMETER (MPI_SUBARRAYS_SUPPORTED=.FALSE.)",
        "      LOGICAL MPI_ASYNC_PROTECTS_NONBLOCKING",
        "      PARAMETER (MPI_ASYNC_PROTECTS_NONBLOCKING=.FALSE.)",
        "! The sentinels: variables the library knows by their address",
        "      INTEGER MPI_BOTTOM, MPI_IN_PLACE",
        "      INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)",
        "      INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)",
        "      INTEGER MPI_ERRCODES_IGNORE(1)",
        "      INTEGER MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY",
        "      CHARACTER*1 MPI_ARGVS_NULL(1,1)",
        "      CHARACTER*1 MPI_ARGV_NULL(1)",
        "      COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE",
        "      COMMON /MPIPRIV2/ MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE",
        "      COMMON /MPIFCMB5/ MPI_UNWEIGHTED",
        "      COMMON /MPIFCMB9/ MPI_WEIGHTS_EMPTY",
        "      COMMON /MPIPRIVC/ MPI_ARGVS_NULL, MPI_ARGV_NULL",
        "      SAVE /MPIPRIV1/, /MPIPRIV2/, /MPIFCMB5/, /MPIFCMB9/, /MPIPRIVC/",
        "! Functions that return a value, and the predefined callbacks",
        "      DOUBLE PRECISION MPI_WTIME, MPI_WTICK",
        "      DOUBLE PRECISION PMPI_WTIME, PMPI_WTICK",
        "      EXTERNAL MPI_WTIME, MPI_WTICK, PMPI_WTIME, PMPI_WTICK",
        "      EXTERNAL MPI_DUP_FN, MPI_NULL_DELETE_FN, MPI_NULL_COPY_FN",
        "      EXTERNAL MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN",
        "      EXTERNAL MPI_COMM_NULL_COPY_FN",
        "      EXTERNAL MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN",
        "      EXTERNAL MPI_TYPE_NULL_COPY_FN",
        "      INTEGER(KIND=MPI_ADDRESS_KIND) MPI_AINT_ADD, MPI_AINT_DIFF",
        "      EXTERNAL MPI_AINT_ADD, MPI_AINT_DIFF",
    ]
    for l in lines:
        assert len(l) <= 72, f"mpif.h line longer than fixed form allows: {l}"
    return "\n".join(lines) + "\n"


# Routines the mpi module gives no interface: those mpif.h declares itself
# (EXTERNAL, typed), which the interfaces would declare twice; the
# standard's conversions to and from mpi_f08's TYPE(MPI_Status), which
# need that module (oxmpi has none); and MPI_PCONTROL, whose standard
# binding is (LEVEL) but MPICH's and ours (LEVEL, IERROR): programs call
# it both ways.
NO_INTERFACE = {"MPI_WTIME", "MPI_WTICK", "MPI_AINT_ADD", "MPI_AINT_DIFF", "MPI_STATUS_F082F", "MPI_STATUS_F2F08",
                "MPI_PCONTROL"}


def free_form(line, indent):
    """One declaration as free-form lines of at most 100 columns, split
    after commas."""
    out, cur = [], " " * indent
    for part in re.split(r"(?<=,) ", line):
        if len(cur) + len(part) > 98 and cur.strip():
            out.append(cur.rstrip() + " &")
            cur = " " * (indent + 4)
        cur += part + " "
    out.append(cur.rstrip())
    return out


def entities(decl):
    """The entities of a declaration's list: `A, B(*), C(N, *)`."""
    out, depth, cur = [], 0, ""
    for ch in decl:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + [cur.strip()]


# Integer arrays whose rank the mpi module does not check: a topology's
# weights, where MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY (scalars in mpif.h,
# as in MPICH's) go; and a v or w collective's counts, displacements and
# types, which MPI_IN_PLACE or a rank other than the root leaves unread,
# and where programs written for MPICH (whose module has no interface for
# routines with choice buffers) pass a 0.
UNCHECKED = ("WEIGHTS", "SENDCOUNTS", "SDISPLS", "SENDTYPES", "RECVCOUNTS", "RDISPLS", "RECVTYPES", "DISPLS")


def unchecked(entity):
    return entity.split("(")[0] in UNCHECKED or entity.split("(")[0].endswith("WEIGHTS")


def interface(f90):
    """The interface body of one routine from the standard's Fortran
    binding text (its first line the call, then its declarations)."""
    head, *decls = [l.strip() for l in str(f90).split("\n")]
    name = head.split("(")[0]
    body = free_form(f"subroutine {head}", 4) + ["      import", "      implicit none"]
    for d in decls:
        if d.startswith("<type>"):
            # a choice buffer: any type, kind and rank, a scalar included
            for arg in re.findall(r"(\w+)(?:\([^)]*\))?", d[len("<type>"):]):
                body += [f"      !GCC$ ATTRIBUTES NO_ARG_CHECK :: {arg}", f"      TYPE(*), DIMENSION(*) :: {arg}"]
        elif d.startswith("INTEGER ") and any(unchecked(e) for e in entities(d[len("INTEGER "):])):
            rest = [e for e in entities(d[len("INTEGER "):]) if not unchecked(e)]
            for e in entities(d[len("INTEGER "):]):
                if unchecked(e):
                    arg = e.split("(")[0]
                    body += [f"      !GCC$ ATTRIBUTES NO_ARG_CHECK :: {arg}", f"      INTEGER {e}"]
            if rest:
                body += free_form("INTEGER " + ", ".join(rest), 6)
        else:
            body += free_form(d, 6)
    body.append(f"    end subroutine {name}")
    return name, body


def module(bound):
    """The `mpi` module: mpif.h's constants and sentinels, and interfaces
    for the routines in `bound` (upper-case names)."""
    std.use_api_version(1)
    lines = ["! oxmpi's `mpi` module (use mpi): mpif.h, and an explicit interface for",
             "! every routine libmpifort binds, from the MPI standard's Fortran",
             "! bindings (choice buffers take any type and rank: GCC's NO_ARG_CHECK).",
             "! Generated by tools/gen_fortran.py; do not edit.",
             "module mpi",
             "  use oxmpi_sizeof",
             "  implicit none",
             "  include 'mpif.h'",
             "  interface"]
    names = []
    for p in sorted(std.all_f90_procedures(), key=lambda p: p.name.lower()):
        f90 = p.express.f90
        if f90 is None or not re.match(r"^MPI_\w+\(", str(f90)):
            continue
        name, body = interface(f90)
        if name not in bound or name in NO_INTERFACE:
            continue
        lines += body
        names.append(name)
    lines += ["  end interface", "end module mpi"]
    return "\n".join(lines) + "\n", names


# MPI_SIZEOF's types: every kind gfortran has of the numeric intrinsic
# types (and LOGICAL and CHARACTER, as MPICH's module takes them too; a
# string's size is its length).
SIZEOF_KINDS = [("integer", k) for k in (1, 2, 4, 8, 16)] + [("real", k) for k in (4, 8, 10, 16)] + \
    [("complex", k) for k in (4, 8, 10, 16)] + [("logical", k) for k in (1, 2, 4, 8)] + [("character", "len=*")]


def sizeof():
    """MPI_SIZEOF (MPI 4.0 section 19.1.9), for the mpi module to use: a
    generic over a module procedure per type and kind, scalars and arrays
    of any rank alike (assumed rank), each giving the bytes of one
    element. A module of its own, without mpif.h, whose object goes into
    libmpifort: the mpi module's would bring mpif.h's common blocks, which
    the C bindings define."""
    names = [f"MPI_SIZEOF_{t.upper()}{k if isinstance(k, int) else ''}" for t, k in SIZEOF_KINDS]
    out = ["! MPI_SIZEOF for oxmpi's `mpi` module, which uses this one; its object",
           "! is in libmpifort. Generated by tools/gen_fortran.py; do not edit.",
           "module oxmpi_sizeof",
           "  implicit none",
           "  private",
           "  public :: MPI_SIZEOF",
           "  integer, parameter :: SUCCESS = 0",
           "  interface MPI_SIZEOF"]
    out += free_form("module procedure " + ", ".join(names), 4)
    out += ["  end interface MPI_SIZEOF", "contains"]
    for (t, k), name in zip(SIZEOF_KINDS, names):
        out += [f"  subroutine {name}(X, SIZE, IERROR)",
                f"    {t}({k}), dimension(..), intent(in) :: X",
                "    integer, intent(out) :: SIZE, IERROR",
                "    SIZE = storage_size(X) / 8",
                "    IERROR = SUCCESS",
                f"  end subroutine {name}"]
    return "\n".join(out + ["end module oxmpi_sizeof"]) + "\n"


def parameters(text):
    """The integer PARAMETERs of an mpif.h, by name."""
    val = {}
    for body in re.findall(r"^\s+PARAMETER\s*\((.*)\)\s*$", text, re.M | re.I):
        for assign in body.split(","):
            name, _, expr = assign.partition("=")
            expr = re.sub(r"\b(MPI_\w+)\b", lambda m: str(val.get(m.group(1).upper(), "None")), expr)
            try:
                val[name.strip().upper()] = int(eval(expr, {}))
            except (SyntaxError, TypeError, NameError):
                pass
    return val


def compare_with_mpich(ours):
    """Every constant MPICH's mpif.h has: ours has it with the same value."""
    if not os.path.exists(MPICH_MPIF_H):
        print(f"(MPICH's mpif.h not installed: values not compared; run make setup)")
        return []
    mine, theirs = parameters(ours), parameters(open(MPICH_MPIF_H).read())
    bad = [f"{n}: ours {mine.get(n)}, MPICH {v}" for n, v in sorted(theirs.items()) if mine.get(n) != v]
    for b in bad:
        print(f"mpif.h differs from MPICH's: {b}")
    if not bad:
        print(f"mpif.h: all {len(theirs)} integer constants of MPICH's mpif.h present with MPICH's values")
    return bad


def main():
    lib = sys.argv[1]
    code, names = bindings(lib)
    bound = {n.upper() for n in names} | {n.upper() for n in hand_written()}
    mod, interfaces = module(bound)
    files = {BINDINGS: code, MPIF_H: mpif(), MODULE: mod, SIZEOF: sizeof()}
    if "--check" in sys.argv:
        stale = [p for p, t in files.items() if not os.path.exists(p) or open(p).read() != t]
        if compare_with_mpich(files[MPIF_H]):
            sys.exit(1)
        for p in stale:
            print(f"{os.path.relpath(p, ROOT)} is stale: run tools/gen_fortran.py {lib}")
        if stale:
            sys.exit(1)
        print(f"Fortran interface up to date ({len(names)} generated bindings, {len(interfaces)} interfaces in the mpi module)")
        return
    for p, t in files.items():
        open(p, "w").write(t)
    print(f"{len(names)} generated bindings, {len(hand_written())} hand-written, {len(interfaces)} interfaces in the mpi module")


if __name__ == "__main__":
    main()
