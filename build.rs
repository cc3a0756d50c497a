//! Gives libmpi.so MPICH's soname and compiles the few C helpers
//! (long double arithmetic, which Rust has no type for).
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmpi.so.12");
    println!("cargo:rerun-if-changed=csrc/longdouble.c");
    cc::Build::new().file("csrc/longdouble.c").opt_level(2).compile("oxmpi_c");
}
