//! mpicc / mpicxx / mpif77 / mpif90 / mpifort: compile and link a program
//! against oxmpi (Fortran programs also against libmpifort, the mpif.h
//! bindings). The install
//! prefix is found from this executable's own place (PREFIX/bin), so an
//! installed tree can be moved. MPICH's `-show`, `-compile-info`,
//! `-link-info` and Open MPI's `--showme[:compile|:link]` are understood.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

fn prefix() -> PathBuf {
    let exe = std::env::current_exe().ok().and_then(|p| p.canonicalize().ok());
    exe.and_then(|p| p.parent()?.parent().map(PathBuf::from)).unwrap_or_else(|| PathBuf::from("/usr/local"))
}

fn main() {
    let argv0 = std::env::args().next().unwrap_or_default();
    let name = std::path::Path::new(&argv0).file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let cxx = name.contains("cxx") || name.contains("c++") || name.contains("CC");
    let fortran = name.contains("f77") || name.contains("f90") || name.contains("fort");
    let (var, default) = match (fortran, cxx) {
        (true, _) => ("OXMPI_FC", "gfortran"),
        (false, true) => ("OXMPI_CXX", "c++"),
        (false, false) => ("OXMPI_CC", "cc"),
    };
    let compiler = std::env::var(var).unwrap_or_else(|_| default.into());
    let p = prefix();
    let mut inc = vec![format!("-I{}", p.join("include").display())];
    if fortran && compiler.contains("gfortran") {
        // mpif.h passes any buffer to one routine (gfortran 10+ refuses
        // that without this flag)
        inc.push("-fallow-argument-mismatch".to_string());
    }
    let lib = p.join("lib");
    let mut link = vec![format!("-L{}", lib.display()), format!("-Wl,-rpath,{}", lib.display())];
    if fortran {
        link.push("-lmpifort".to_string());
    }
    link.push("-lmpi".to_string());

    let mut show = None;
    let mut args = Vec::new();
    for a in std::env::args().skip(1) {
        match a.as_str() {
            "-show" | "--showme" => show = Some("all"),
            "-compile-info" | "--showme:compile" => show = Some("compile"),
            "-link-info" | "--showme:link" => show = Some("link"),
            "-compile_info" => show = Some("compile"),
            "-link_info" => show = Some("link"),
            _ => args.push(a),
        }
    }
    let compile_only = args.iter().any(|a| matches!(a.as_str(), "-c" | "-E" | "-S" | "-M" | "-MM"));
    let mut cmd: Vec<String> = vec![compiler.clone()];
    match show {
        Some("compile") => cmd.extend(inc.iter().cloned().chain(args.clone())),
        Some("link") => cmd.extend(args.iter().cloned().chain(link.clone())),
        _ => {
            cmd.extend(inc);
            cmd.extend(args);
            if !compile_only {
                cmd.extend(link);
            }
        }
    }
    if show.is_some() {
        let out =
            if name.starts_with("mpi") && show != Some("all") && std::env::args().any(|a| a.starts_with("--showme")) {
                cmd[1..].join(" ")
            } else {
                cmd.join(" ")
            };
        println!("{out}");
        return;
    }
    let err = Command::new(&cmd[0]).args(&cmd[1..]).exec();
    eprintln!("{name}: cannot run {compiler}: {err} (set {var} to choose the compiler)");
    std::process::exit(127);
}
