//! What a datatype is: size, extents, envelope and contents, name, and
//! the predefined types matched by size and the Fortran 90 kinds.

use super::*;
use crate::abi::env::write_c_string;
use crate::abi::out;
use std::os::raw::c_char;

/// Define a query writing one value derived from the type.
macro_rules! query {
    ($f:ident / $pf:ident, $t:ty, $name:literal, |$ty:ident| $v:expr) => {
        mpi_fn! {
            Initialized fn $f / $pf(datatype: c_int, value: *mut $t) errors(None) {
                let $ty = handles::datatype(datatype)?;
                // SAFETY: valid per the standard (checked non-null).
                unsafe { out(value, $name, $v) }
            }
        }
    };
}

pub(super) fn int_or_undefined(v: usize) -> c_int {
    if v > i32::MAX as usize {
        UNDEFINED
    } else {
        v as c_int
    }
}

query!(MPI_Type_size / PMPI_Type_size, c_int, "size", |t| int_or_undefined(t.size));
query!(MPI_Type_size_x / PMPI_Type_size_x, i64, "size", |t| t.size as i64);
query!(MPI_Type_size_c / PMPI_Type_size_c, i64, "size", |t| t.size as i64);
query!(MPI_Type_extent / PMPI_Type_extent, isize, "extent", |t| t.extent);
query!(MPI_Type_lb / PMPI_Type_lb, isize, "displacement", |t| t.lb);
query!(MPI_Type_ub / PMPI_Type_ub, isize, "displacement", |t| t.lb + t.extent);

/// Define a query writing two values.
macro_rules! query2 {
    ($f:ident / $pf:ident, $t:ty, |$ty:ident| ($a:expr, $b:expr)) => {
        mpi_fn! {
            Initialized fn $f / $pf(datatype: c_int, first: *mut $t, second: *mut $t) errors(None) {
                let $ty = handles::datatype(datatype)?;
                // SAFETY: valid per the standard (checked non-null).
                unsafe {
                    out(first, "lb", $a as $t)?;
                    out(second, "extent", $b as $t)
                }
            }
        }
    };
}

query2!(MPI_Type_get_extent / PMPI_Type_get_extent, isize, |t| (t.lb, t.extent));
query2!(MPI_Type_get_extent_x / PMPI_Type_get_extent_x, i64, |t| (t.lb, t.extent));
query2!(MPI_Type_get_extent_c / PMPI_Type_get_extent_c, i64, |t| (t.lb, t.extent));
query2!(MPI_Type_get_true_extent / PMPI_Type_get_true_extent, isize, |t| (t.true_lb, t.true_extent));
query2!(MPI_Type_get_true_extent_x / PMPI_Type_get_true_extent_x, i64, |t| (t.true_lb, t.true_extent));
query2!(MPI_Type_get_true_extent_c / PMPI_Type_get_true_extent_c, i64, |t| (t.true_lb, t.true_extent));

/// How many integers, addresses, large counts and datatypes a type was
/// made from, and its combiner.
struct Envelope {
    ints: usize,
    addresses: usize,
    large: usize,
    types: usize,
    combiner: c_int,
}

fn envelope(t: &TypeInfo) -> Envelope {
    match &t.contents {
        None => Envelope { ints: 0, addresses: 0, large: 0, types: 0, combiner: build::combiner::NAMED },
        Some(c) => Envelope {
            ints: c.ints.len(),
            addresses: c.addresses.len(),
            large: c.large.len(),
            types: c.types.len(),
            combiner: c.combiner,
        },
    }
}

/// The int variants cannot tell a large-count constructor's arguments.
fn no_large(e: &Envelope, f: &str) -> MpiResult<()> {
    if e.large > 0 {
        return err!(Type, "this datatype was made by a large-count constructor (MPI_Type_..._c): query it with {f}_c");
    }
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Type_get_envelope / PMPI_Type_get_envelope(datatype: c_int, num_integers: *mut c_int, num_addresses: *mut c_int, num_datatypes: *mut c_int, combiner: *mut c_int) errors(None) {
        let e = envelope(&*handles::datatype(datatype)?);
        no_large(&e, "MPI_Type_get_envelope")?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe {
            out(num_integers, "num_integers", e.ints as c_int)?;
            out(num_addresses, "num_addresses", e.addresses as c_int)?;
            out(num_datatypes, "num_datatypes", e.types as c_int)?;
            out(combiner, "combiner", e.combiner)
        }
    }
}

mpi_fn! {
    Initialized fn MPI_Type_get_envelope_c / PMPI_Type_get_envelope_c(datatype: c_int, num_integers: *mut i64, num_addresses: *mut i64, num_large_counts: *mut i64, num_datatypes: *mut i64, combiner: *mut c_int) errors(None) {
        let e = envelope(&*handles::datatype(datatype)?);
        // SAFETY: valid per the standard (checked non-null).
        unsafe {
            out(num_integers, "num_integers", e.ints as i64)?;
            out(num_addresses, "num_addresses", e.addresses as i64)?;
            out(num_large_counts, "num_large_counts", e.large as i64)?;
            out(num_datatypes, "num_datatypes", e.types as i64)?;
            out(combiner, "combiner", e.combiner)
        }
    }
}

/// Where MPI_Type_get_contents(_c) writes, and how much room each array has.
struct Arrays {
    ints: (*mut c_int, i64),
    addresses: (*mut isize, i64),
    large: (*mut i64, i64),
    types: (*mut c_int, i64),
}

/// # Safety
/// Each array holds as many values as its room says.
unsafe fn contents(datatype: c_int, out: Arrays) -> MpiResult<()> {
    let t = handles::datatype(datatype)?;
    let Some(c) = &t.contents else {
        return err!(
            Type,
            "MPI_Type_get_contents on a predefined (named) datatype; check MPI_Type_get_envelope's combiner first"
        );
    };
    let fits = |n: usize, room: i64| room >= 0 && room as usize >= n;
    if !fits(c.ints.len(), out.ints.1)
        || !fits(c.addresses.len(), out.addresses.1)
        || !fits(c.large.len(), out.large.1)
        || !fits(c.types.len(), out.types.1)
    {
        return err!(
            Arg,
            "arrays too small: the type has {} integers, {} addresses, {} large counts, {} datatypes (see MPI_Type_get_envelope)",
            c.ints.len(),
            c.addresses.len(),
            c.large.len(),
            c.types.len()
        );
    }
    // SAFETY: sizes checked against the caller's room.
    unsafe {
        for (k, &v) in c.ints.iter().enumerate() {
            *out.ints.0.add(k) = v as c_int;
        }
        for (k, &v) in c.addresses.iter().enumerate() {
            *out.addresses.0.add(k) = v;
        }
        for (k, &v) in c.large.iter().enumerate() {
            *out.large.0.add(k) = v;
        }
        for (k, ty) in c.types.iter().enumerate() {
            *out.types.0.add(k) = handles::handle_of(ty);
        }
    }
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Type_get_contents / PMPI_Type_get_contents(datatype: c_int, max_integers: c_int, max_addresses: c_int, max_datatypes: c_int, array_of_integers: *mut c_int, array_of_addresses: *mut isize, array_of_datatypes: *mut c_int) errors(None) {
        no_large(&envelope(&*handles::datatype(datatype)?), "MPI_Type_get_contents")?;
        let out = Arrays {
            ints: (array_of_integers, max_integers.into()),
            addresses: (array_of_addresses, max_addresses.into()),
            large: (std::ptr::null_mut(), 0),
            types: (array_of_datatypes, max_datatypes.into()),
        };
        // SAFETY: arrays as the standard requires.
        unsafe { contents(datatype, out) }
    }
}

mpi_fn! {
    Initialized fn MPI_Type_get_contents_c / PMPI_Type_get_contents_c(datatype: c_int, max_integers: i64, max_addresses: i64, max_large_counts: i64, max_datatypes: i64, array_of_integers: *mut c_int, array_of_addresses: *mut isize, array_of_large_counts: *mut i64, array_of_datatypes: *mut c_int) errors(None) {
        let out = Arrays {
            ints: (array_of_integers, max_integers),
            addresses: (array_of_addresses, max_addresses),
            large: (array_of_large_counts, max_large_counts),
            types: (array_of_datatypes, max_datatypes),
        };
        // SAFETY: arrays as the standard requires.
        unsafe { contents(datatype, out) }
    }
}

mpi_fn! {
    Initialized fn MPI_Type_get_name / PMPI_Type_get_name(datatype: c_int, type_name: *mut c_char, resultlen: *mut c_int) errors(None) {
        let t = handles::datatype(datatype)?;
        if type_name.is_null() {
            return err!(Arg, "type_name is a null pointer");
        }
        let renamed = renamed().get(&datatype).cloned();
        // SAFETY: the standard requires MPI_MAX_OBJECT_NAME bytes.
        let n = unsafe { write_c_string(type_name, MAX_OBJECT_NAME, renamed.as_deref().unwrap_or(&t.name)) };
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(resultlen, "resultlen", n as c_int) }
    }
}

mpi_fn! {
    Initialized fn MPI_Type_set_name / PMPI_Type_set_name(datatype: c_int, type_name: *const c_char) errors(None) {
        if type_name.is_null() {
            return err!(Arg, "type_name is a null pointer");
        }
        // SAFETY: a C string per the standard.
        let name = unsafe { std::ffi::CStr::from_ptr(type_name) }.to_string_lossy();
        let name: String = name.chars().take(MAX_OBJECT_NAME - 1).collect();
        if let TypeRef::Builtin(_) = handles::datatype(datatype)? {
            renamed().insert(datatype, name);
            return Ok(());
        }
        handles::update_datatype(datatype, |t| t.name = name)
    }
}

/// The names the program gave predefined datatypes (MPI_Type_set_name
/// may rename them, as MPICH and Open MPI allow); oxmpi's own error
/// messages keep the standard's names.
fn renamed() -> std::sync::MutexGuard<'static, std::collections::HashMap<c_int, String>> {
    static RENAMED: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<c_int, String>>> =
        std::sync::OnceLock::new();
    RENAMED.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

/// MPI_TYPECLASS_*: (class, size) -> the Fortran sized type's handle.
fn match_size(class: c_int, size: c_int) -> Option<c_int> {
    Some(match (class, size) {
        (1, 4) => 0x4c000427,  // MPI_REAL4
        (1, 8) => 0x4c000829,  // MPI_REAL8
        (1, 16) => 0x4c00102b, // MPI_REAL16
        (2, 1) => 0x4c00012d,  // MPI_INTEGER1
        (2, 2) => 0x4c00022f,  // MPI_INTEGER2
        (2, 4) => 0x4c000430,  // MPI_INTEGER4
        (2, 8) => 0x4c000831,  // MPI_INTEGER8
        (3, 8) => 0x4c000828,  // MPI_COMPLEX8
        (3, 16) => 0x4c00102a, // MPI_COMPLEX16
        (3, 32) => 0x4c00202c, // MPI_COMPLEX32
        _ => return None,
    })
}

mpi_fn! {
    Initialized fn MPI_Type_match_size / PMPI_Type_match_size(typeclass: c_int, size: c_int, datatype: *mut c_int) errors(None) {
        let Some(h) = match_size(typeclass, size) else {
            return err!(Arg, "no predefined type of class {typeclass} (MPI_TYPECLASS_REAL=1, _INTEGER=2, _COMPLEX=3) has {size} bytes");
        };
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(datatype, "datatype", h) }
    }
}

/// A parameterized Fortran 90 type: the sized type, remembered with its
/// parameters (MPI 4.0 §19.1.9); one handle per parameter set.
fn f90(key: (c_int, c_int, c_int), base: c_int, combiner: i32, ints: Vec<i64>, newtype: *mut c_int) -> MpiResult<()> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    /// (kind: 0 integer, 1 real, 2 complex; p; r) -> the handle made.
    type Made = HashMap<(c_int, c_int, c_int), c_int>;
    static CACHE: Mutex<Option<Made>> = Mutex::new(None);
    if newtype.is_null() {
        return err!(Arg, "newtype is a null pointer");
    }
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let h = *cache.get_or_insert_with(HashMap::new).entry(key).or_insert_with(|| {
        let b = handles::datatype(base).expect("predefined");
        let mut t = build::dup(&b);
        t.contents = Some(Box::new(crate::datatype::Contents {
            combiner,
            ints,
            addresses: vec![],
            large: vec![],
            types: vec![],
        }));
        t.committed = true;
        handles::new_datatype(t)
    });
    // SAFETY: checked non-null.
    unsafe { *newtype = h };
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Type_create_f90_integer / PMPI_Type_create_f90_integer(r: c_int, newtype: *mut c_int) errors(None) {
        let base = match r {
            ..=2 => 0x4c00012d,
            3..=4 => 0x4c00022f,
            5..=9 => 0x4c000430,
            10..=18 => 0x4c000831,
            _ => return err!(Arg, "no integer kind has a decimal range of {r} digits (at most 18)"),
        };
        f90((0, r, 0), base, build::combiner::F90_INTEGER, vec![r as i64], newtype)
    }
}

/// The REAL kind for precision `p` and exponent range `r` (either may be
/// MPI_UNDEFINED): 0 for 4 bytes, 1 for 8, 2 for 16.
fn real_kind(p: c_int, r: c_int) -> Option<usize> {
    let p = if p == UNDEFINED { 0 } else { p };
    let r = if r == UNDEFINED { 0 } else { r };
    [(6, 37), (15, 307), (33, 4931)].iter().position(|&(mp, mr)| p <= mp && r <= mr)
}

mpi_fn! {
    Initialized fn MPI_Type_create_f90_real / PMPI_Type_create_f90_real(p: c_int, r: c_int, newtype: *mut c_int) errors(None) {
        let Some(k) = real_kind(p, r) else {
            return err!(Arg, "no real kind has precision {p} and exponent range {r}");
        };
        let base = [0x4c000427, 0x4c000829, 0x4c00102b][k];
        f90((1, p, r), base, build::combiner::F90_REAL, vec![p as i64, r as i64], newtype)
    }
}

mpi_fn! {
    Initialized fn MPI_Type_create_f90_complex / PMPI_Type_create_f90_complex(p: c_int, r: c_int, newtype: *mut c_int) errors(None) {
        let Some(k) = real_kind(p, r) else {
            return err!(Arg, "no complex kind has precision {p} and exponent range {r}");
        };
        let base = [0x4c000828, 0x4c00102a, 0x4c00202c][k];
        f90((2, p, r), base, build::combiner::F90_COMPLEX, vec![p as i64, r as i64], newtype)
    }
}
