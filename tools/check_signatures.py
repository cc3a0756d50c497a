#!/usr/bin/env python3
"""Every extern "C" entry point in src/abi must agree with its prototype in
include/mpi.h: same number of parameters, and each of the same machine
class (32-bit int or handle, 64-bit integer, double, pointer; a variadic
function's `...` may be left out by a callee that never reads it). A mismatch
here would corrupt arguments silently, so it fails the build's tests.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HANDLES = {"MPI_Comm", "MPI_Datatype", "MPI_Op", "MPI_Request", "MPI_Errhandler", "MPI_Group",
           "MPI_Info", "MPI_Win", "MPI_Message", "MPI_Session", "MPI_Fint", "int"}
WIDE = {"MPI_Aint", "MPI_Count", "MPI_Offset", "long", "long long", "size_t"}


def c_class(param):
    p = param.strip()
    if p == "...":
        return "..."
    if "*" in p or "[" in p:
        return "ptr"
    t = re.sub(r"\b(const|volatile)\b", "", p).split()
    base = " ".join(t[:-1]) if len(t) > 1 else t[0]
    if base in HANDLES:
        return "int"
    if base in WIDE:
        return "i64"
    if base == "double":
        return "f64"
    return "?" + base


def rust_class(ty):
    ty = ty.strip()
    # raw pointers, and nullable C function pointers (Option<extern fn>)
    if ty.startswith("*") or (ty.startswith("Option<") and ty.endswith("Fn>")):
        return "ptr"
    return {"c_int": "int", "i32": "int", "i64": "i64", "isize": "i64", "usize": "i64", "f64": "f64"}.get(ty, "?" + ty)


def header_protos():
    text = open(os.path.join(ROOT, "include", "mpi.h")).read()
    protos = {}
    for m in re.finditer(r"^[\w ]+?\b(P?MPIR?_\w+)\((.*?)\);", text, re.M | re.S):
        args = [a for a in m.group(2).split(",") if a.strip() and a.strip() != "void"]
        protos[m.group(1)] = [c_class(a) for a in args]
    return protos


def rust_entries():
    entries = {}
    for path in glob.glob(os.path.join(ROOT, "src", "abi", "*.rs")):
        text = open(path).read()
        for m in re.finditer(r"fn (MPI_\w+) / (PMPI_\w+)\s*\((.*?)\)\s*errors", text, re.S):
            params = [p for p in re.split(r",(?![^<]*>)", m.group(3)) if p.strip()]
            entries[m.group(1)] = [rust_class(p.split(":", 1)[1]) for p in params]
        for m in re.finditer(r'extern "C" fn (P?MPI\w+|MPIR_\w+)\((.*?)\)', text, re.S):
            params = [p for p in m.group(2).split(",") if p.strip()]
            entries.setdefault(m.group(1), [rust_class(p.split(":", 1)[1]) for p in params])
    return entries


def main():
    protos = header_protos()
    bad = 0
    entries = rust_entries()
    for name, rust in sorted(entries.items()):
        c = protos.get(name)
        # a variadic function's callee may name its fixed parameters alone
        # when it reads none of the others (MPI_Pcontrol)
        if c and c[-1] == "..." and rust == c[:-1]:
            c = rust
        if c is None:
            print(f"  {name}: no prototype in include/mpi.h")
            bad += 1
        elif c != rust:
            print(f"  {name}: header {c} but Rust {rust}")
            bad += 1
    print(f"check_signatures: {len(entries)} entry points compared with include/mpi.h, {bad} mismatches")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
