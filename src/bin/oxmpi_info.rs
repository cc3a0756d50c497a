//! oxmpi-info: the version, the build, and every tunable with its default,
//! its current value in this environment, and its meaning.

use mpi::runtime::tunables::{value, TUNABLES};

fn main() {
    let markdown = std::env::args().any(|a| a == "--markdown");
    if markdown {
        println!("| variable | default | meaning |\n|---|---|---|");
        for t in TUNABLES {
            println!("| `{}` | `{}` | {} |", t.name, t.default, t.meaning);
        }
        return;
    }
    println!("oxmpi {}", env!("CARGO_PKG_VERSION"));
    println!("MPI standard: 4.0; ABI: MPICH (libmpi.so.12)");
    println!("build: {} {}", std::env::consts::ARCH, if cfg!(debug_assertions) { "debug" } else { "release" });
    println!("thread support: up to MPI_THREAD_SERIALIZED");
    println!("transports: shm (shared segment, cross-memory attach)");
    println!();
    println!("tunables (environment variables):");
    for t in TUNABLES {
        let v = value(t.name);
        let mark = if std::env::var(t.name).is_ok() { " (set)" } else { "" };
        println!("  {:24} default {:10} current {}{mark}", t.name, t.default, v);
        println!("  {:24} {}", "", t.meaning);
    }
}
