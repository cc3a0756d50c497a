//! Groups (MPI 4.0 §7.3): size, rank, compare, the set algebra,
//! inclusion and exclusion by ranks and ranges, rank translation.

use super::*;
use crate::abi::handles::GROUP_NULL;

/// Define a group query or constructor over the state.
fn group_out(group: *mut c_int, f: impl FnOnce(&State) -> MpiResult<Vec<usize>>) -> MpiResult<()> {
    if group.is_null() {
        return err!(Arg, "newgroup is a null pointer");
    }
    let h = with_state(|st| {
        let m = f(st)?;
        Ok(handles::new_group(st, m))
    })?;
    // SAFETY: checked non-null.
    unsafe { *group = h };
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Group_size / PMPI_Group_size(group: c_int, size: *mut c_int) errors(None) {
        let n = with_state(|st| Ok(handles::group(st, group)?.len()))?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(size, "size", n as c_int) }
    }
}

mpi_fn! {
    Initialized fn MPI_Group_rank / PMPI_Group_rank(group: c_int, rank: *mut c_int) errors(None) {
        let r = with_state(|st| {
            let g = handles::group(st, group)?;
            let me = st.world().rank;
            Ok(g.iter().position(|&w| w == me).map_or(UNDEFINED, |p| p as c_int))
        })?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(rank, "rank", r) }
    }
}

mpi_fn! {
    Initialized fn MPI_Group_free / PMPI_Group_free(group: *mut c_int) errors(None) {
        if group.is_null() {
            return err!(Arg, "group is a null pointer");
        }
        // SAFETY: checked non-null.
        with_state(|st| handles::free_group(st, unsafe { *group }))?;
        // SAFETY: as above.
        unsafe { *group = GROUP_NULL };
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Group_compare / PMPI_Group_compare(group1: c_int, group2: c_int, result: *mut c_int) errors(None) {
        let r = with_state(|st| Ok(group::compare(&handles::group(st, group1)?, &handles::group(st, group2)?)))?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(result, "result", r) }
    }
}

/// Define a two-group set operation.
macro_rules! set_op {
    ($f:ident / $pf:ident, $op:path) => {
        mpi_fn! {
            Initialized fn $f / $pf(group1: c_int, group2: c_int, newgroup: *mut c_int) errors(None) {
                group_out(newgroup, |st| Ok($op(&handles::group(st, group1)?, &handles::group(st, group2)?)))
            }
        }
    };
}

set_op!(MPI_Group_union / PMPI_Group_union, group::union);
set_op!(MPI_Group_intersection / PMPI_Group_intersection, group::intersection);
set_op!(MPI_Group_difference / PMPI_Group_difference, group::difference);

/// # Safety
/// `p` holds `n` ints (n checked non-negative).
unsafe fn ints(p: *const c_int, n: c_int) -> MpiResult<Vec<i64>> {
    if n < 0 {
        return err!(Arg, "count {n} is negative");
    }
    if n > 0 && p.is_null() {
        return err!(Arg, "the rank array is a null pointer");
    }
    if n == 0 {
        return Ok(vec![]);
    }
    // SAFETY: per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n as usize) }.iter().map(|&x| x as i64).collect())
}

mpi_fn! {
    Initialized fn MPI_Group_incl / PMPI_Group_incl(group: c_int, n: c_int, ranks: *const c_int, newgroup: *mut c_int) errors(None) {
        // SAFETY: `n` ranks per the standard.
        let r = unsafe { ints(ranks, n)? };
        group_out(newgroup, |st| group::incl(&handles::group(st, group)?, &r))
    }
}

mpi_fn! {
    Initialized fn MPI_Group_excl / PMPI_Group_excl(group: c_int, n: c_int, ranks: *const c_int, newgroup: *mut c_int) errors(None) {
        // SAFETY: `n` ranks per the standard.
        let r = unsafe { ints(ranks, n)? };
        group_out(newgroup, |st| group::excl(&handles::group(st, group)?, &r))
    }
}

/// # Safety
/// `ranges` holds `n` triplets.
unsafe fn triplets(ranges: *const [c_int; 3], n: c_int) -> MpiResult<Vec<(i64, i64, i64)>> {
    // SAFETY: 3n ints per the caller's contract.
    let flat = unsafe { ints(ranges as *const c_int, n.saturating_mul(3))? };
    Ok(flat.chunks(3).map(|t| (t[0], t[1], t[2])).collect())
}

mpi_fn! {
    Initialized fn MPI_Group_range_incl / PMPI_Group_range_incl(group: c_int, n: c_int, ranges: *const [c_int; 3], newgroup: *mut c_int) errors(None) {
        // SAFETY: `n` triplets per the standard.
        let t = unsafe { triplets(ranges, n)? };
        group_out(newgroup, |st| {
            let g = handles::group(st, group)?;
            group::incl(&g, &group::expand_ranges(&t, g.len())?)
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Group_range_excl / PMPI_Group_range_excl(group: c_int, n: c_int, ranges: *const [c_int; 3], newgroup: *mut c_int) errors(None) {
        // SAFETY: `n` triplets per the standard.
        let t = unsafe { triplets(ranges, n)? };
        group_out(newgroup, |st| {
            let g = handles::group(st, group)?;
            group::excl(&g, &group::expand_ranges(&t, g.len())?)
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Group_translate_ranks / PMPI_Group_translate_ranks(group1: c_int, n: c_int, ranks1: *const c_int, group2: c_int, ranks2: *mut c_int) errors(None) {
        // SAFETY: `n` ranks per the standard.
        let r = unsafe { ints(ranks1, n)? };
        let t = with_state(|st| {
            let (a, b) = (handles::group(st, group1)?, handles::group(st, group2)?);
            // MPI_PROC_NULL translates to itself
            let mut out = Vec::with_capacity(r.len());
            for &x in &r {
                out.push(if x == -1 { -1 } else { group::translate(&a, &[x], &b)?[0].map_or(UNDEFINED, |p| p as c_int) });
            }
            Ok(out)
        })?;
        if n > 0 && ranks2.is_null() {
            return err!(Arg, "ranks2 is a null pointer");
        }
        // SAFETY: `n` ints per the standard (checked non-null).
        unsafe { std::ptr::copy_nonoverlapping(t.as_ptr(), ranks2, t.len()) };
        Ok(())
    }
}
