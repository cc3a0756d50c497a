#!/usr/bin/env python3
"""Every extern "C" entry point in src/abi must agree with its prototype in
include/mpi.h: same number of parameters, and each of the same machine
class (32-bit int or handle, 64-bit integer, double, pointer; a variadic
function's `...` may be left out by a callee that never reads it). A mismatch
here would corrupt arguments silently, so it fails the build's tests.

  tools/check_signatures.py [build/lib/libmpi.so.12]

Given the library, every function it exports must have been compared: an
entry point the parsing below misses (a new macro, a file it does not
read) fails the check instead of passing unchecked.
"""
import glob
import os
import re
import subprocess
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


def params_of(text):
    """The classes of a Rust parameter list `a: T, b: U`."""
    params = [p for p in re.split(r",(?![^<]*>)", text) if p.strip()]
    return [rust_class(p.split(":", 1)[1]) for p in params]


def split_top(text, sep=","):
    """`text` cut at each `sep` outside brackets and strings."""
    parts, depth, cur, quoted = [], 0, "", False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "([{<":
            depth += 1
        elif not quoted and ch in ")]}>":
            depth -= 1
        if ch == sep and depth == 0 and not quoted:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def expand_macros(text):
    """`text` with the invocations of its one-arm `macro_rules!` written
    out: each `$name` of the arm's pattern replaced by what the invocation
    passes there (`$a:ident / $b:ident` pairs and whole fragments), so
    that the entry points a macro defines are read like the others."""
    out = [text]
    for m in re.finditer(r"macro_rules! (\w+) \{\s*\((.*?)\) => \{(.*?)\n    \};\n\}", text, re.S):
        name, pattern, body = m.group(1), m.group(2), m.group(3)
        pieces = split_top(pattern)
        for call in re.finditer(name + r"!\s*\((.*?)\);", text, re.S):
            args = split_top(call.group(1))
            if len(args) != len(pieces):
                continue
            binding = {}
            for pat, arg in zip(pieces, args):
                pats, vals = pat.split(" / "), arg.split(" / ")
                if len(pats) != len(vals):
                    continue
                for pv, v in zip(pats, vals):
                    var = re.fullmatch(r"\$(\w+):\w+", pv.strip())
                    if var:
                        binding[var.group(1)] = v.strip()
            # longest names first: `$fc` before `$f`
            expanded = body
            for var in sorted(binding, key=len, reverse=True):
                expanded = expanded.replace("$" + var, binding[var])
            out.append(expanded)
    return "\n".join(out)


def rust_entries():
    entries = {}
    # every file under src/abi, its subdirectories included
    for path in glob.glob(os.path.join(ROOT, "src", "abi", "**", "*.rs"), recursive=True):
        text = expand_macros(open(path).read())
        # `collective!` makes three entry points of one parameter list: the
        # blocking one, the nonblocking one (and a request) and the
        # persistent one (and an info and a request)
        for m in re.finditer(r"collective! \{ \w+;\s*(MPI_\w+) / PMPI_\w+, (MPI_\w+) / PMPI_\w+, (MPI_\w+) / PMPI_\w+;"
                             r"\s*\((.*?)\)\s*\|", text, re.S):
            base = params_of(m.group(4))
            for name, extra in ((m.group(1), []), (m.group(2), ["ptr"]), (m.group(3), ["int", "ptr"])):
                entries[name] = base + extra
        for m in re.finditer(r"fn (MPI_\w+) / (PMPI_\w+)\s*\((.*?)\)\s*errors", text, re.S):
            entries[m.group(1)] = params_of(m.group(3))
        for m in re.finditer(r'extern "C" fn (P?MPI\w+|MPIR_\w+)\((.*?)\)', text, re.S):
            entries.setdefault(m.group(1), params_of(m.group(2)))
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
    if len(sys.argv) > 1:
        out = subprocess.run(["nm", "-D", "--defined-only", sys.argv[1]], capture_output=True, text=True, check=True)
        # functions (text symbols) only; the MPI_X of each MPI_X/PMPI_X pair
        exported = {f[2].split("@")[0] for f in map(str.split, out.stdout.splitlines()) if len(f) >= 3 and f[1] == "T"}
        for name in sorted(n for n in exported if n.startswith("MPI_") and n not in entries):
            print(f"  {name}: exported, but its definition was not found to compare")
            bad += 1
    print(f"check_signatures: {len(entries)} entry points compared with include/mpi.h, {bad} mismatches")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
