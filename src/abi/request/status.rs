//! Reading and writing statuses: counts and elements (MPI_Get_count,
//! MPI_Get_elements and their large forms), MPI_Status_set_elements and
//! _cancelled, and the C/Fortran status conversions.

use super::*;
use crate::datatype::TypeInfo;

/// A C status is five ints laid out as a Fortran one (MPICH's ABI), so
/// converting is copying; MPI_STATUS_IGNORE and MPI_F_STATUS_IGNORE are
/// not statuses to convert (MPI 4.0 section 19.3.5).
fn copy_status(from: *const c_int, to: *mut c_int, ignored: [usize; 2]) -> MpiResult<()> {
    for (p, what) in [(from as usize, "the status to convert"), (to as usize, "the status to fill")] {
        if p == 0 || ignored.contains(&p) {
            return err!(Arg, "{what} must be a real status, not null or a STATUS_IGNORE");
        }
    }
    // SAFETY: both point at five ints (checked to be real statuses).
    unsafe { std::ptr::copy(from, to, 5) };
    Ok(())
}

mpi_fn! {
    Always fn MPI_Status_c2f / PMPI_Status_c2f(c_status: *const CStatus, f_status: *mut c_int) errors(None) {
        copy_status(c_status as *const c_int, f_status, [STATUS_IGNORE, crate::abi::data::f_status_ignore()])
    }
}

mpi_fn! {
    Always fn MPI_Status_f2c / PMPI_Status_f2c(f_status: *const c_int, c_status: *mut CStatus) errors(None) {
        copy_status(f_status, c_status as *mut c_int, [STATUS_IGNORE, crate::abi::data::f_status_ignore()])
    }
}

/// Items of `ty` in `bytes` bytes, or None when they are not whole.
fn whole_items(ty: &TypeInfo, bytes: u64) -> Option<u64> {
    if ty.size == 0 {
        return Some(0);
    }
    bytes.is_multiple_of(ty.size as u64).then(|| bytes / ty.size as u64)
}

/// Basic elements in `bytes` bytes of items of `ty`; None when the bytes
/// end inside a basic element (a pair counts its value alone).
pub fn elements_in(ty: &TypeInfo, bytes: u64) -> Option<u64> {
    if ty.size == 0 {
        return Some(0);
    }
    let full = bytes / ty.size as u64;
    let mut n = full * ty.element_count();
    let mut left = (bytes % ty.size as u64) as usize;
    for &(e, count) in &ty.elems {
        if left == 0 {
            break;
        }
        let whole = (left / e.size).min(count as usize);
        n += whole as u64 * e.elements();
        left -= whole * e.size;
        if (whole as u64) < count && left > 0 {
            // inside one element: a pair's value counts once it is whole
            return (e.elements() == 2 && left == e.first).then_some(n + 1);
        }
    }
    (left == 0).then_some(n)
}

/// The bytes of the first `n` basic elements of items of `ty` (the
/// inverse of `elements_in`: a pair's value alone is its first element);
/// None when no bytes hold that many (a type without elements).
pub fn bytes_of_elements(ty: &TypeInfo, n: u64) -> Option<u64> {
    let per_item = ty.element_count();
    if n == 0 || per_item == 0 {
        return (n == 0).then_some(0);
    }
    let mut bytes = n / per_item * ty.size as u64;
    let mut left = n % per_item;
    for &(e, count) in &ty.elems {
        if left == 0 {
            break;
        }
        let whole = (left / e.elements()).min(count);
        bytes += whole * e.size as u64;
        left -= whole * e.elements();
        if whole < count && left > 0 {
            // one more: a pair's value
            bytes += e.first as u64;
            left = 0;
        }
    }
    Some(bytes)
}

fn real_status<'a>(status: *const CStatus) -> MpiResult<&'a CStatus> {
    if status.is_null() || status as usize == STATUS_IGNORE {
        return err!(Arg, "status must be a real status, not null or MPI_STATUS_IGNORE");
    }
    // SAFETY: checked to be a real status; valid per the standard.
    Ok(unsafe { &*status })
}

/// Define a status query returning a count of `$t` computed by `$f`.
macro_rules! status_count {
    ($f:ident / $pf:ident, $t:ty, $compute:expr) => {
        mpi_fn! {
            Initialized fn $f / $pf(status: *const CStatus, datatype: c_int, count: *mut $t) errors(None) {
                let s = real_status(status)?;
                let ty = handles::datatype(datatype)?;
                let n: Option<u64> = $compute(&ty, status_bytes(s));
                let v = match n {
                    Some(n) if n <= <$t>::MAX as u64 => n as $t,
                    _ => UNDEFINED as $t,
                };
                // SAFETY: valid per the standard (checked non-null).
                unsafe { out(count, "count", v) }
            }
        }
    };
}

status_count!(MPI_Get_count / PMPI_Get_count, c_int, whole_items);
status_count!(MPI_Get_count_c / PMPI_Get_count_c, i64, whole_items);
status_count!(MPI_Get_elements / PMPI_Get_elements, c_int, elements_in);
status_count!(MPI_Get_elements_x / PMPI_Get_elements_x, i64, elements_in);
status_count!(MPI_Get_elements_c / PMPI_Get_elements_c, i64, elements_in);

/// MPI_Status_set_elements(_x): `status` made to say `count` basic
/// elements of `datatype` arrived (MPI_Get_elements then returns it),
/// its other fields left as they are.
///
/// # Safety
/// `status` null, MPI_STATUS_IGNORE or valid.
unsafe fn set_elements(status: *mut CStatus, datatype: c_int, count: i64) -> MpiResult<()> {
    real_status(status)?;
    if count < 0 {
        return err!(Count, "count {count} is negative");
    }
    let ty = handles::datatype(datatype)?;
    let Some(bytes) = bytes_of_elements(&ty, count as u64).filter(|&b| b < 1 << 63) else {
        return err!(
            Count,
            "{count} elements of {} do not fit a status (it has no elements, or they are too many)",
            ty.name
        );
    };
    // SAFETY: checked to be a real status; valid per the standard.
    let s = unsafe { &mut *status };
    put_count(s, bytes, status_cancelled(s));
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Status_set_elements / PMPI_Status_set_elements(status: *mut CStatus, datatype: c_int, count: c_int) errors(None) {
        // SAFETY: valid per the standard.
        unsafe { set_elements(status, datatype, count as i64) }
    }
}

mpi_fn! {
    Initialized fn MPI_Status_set_elements_x / PMPI_Status_set_elements_x(status: *mut CStatus, datatype: c_int, count: i64) errors(None) {
        // SAFETY: valid per the standard.
        unsafe { set_elements(status, datatype, count) }
    }
}

mpi_fn! {
    Initialized fn MPI_Status_set_cancelled / PMPI_Status_set_cancelled(status: *mut CStatus, flag: c_int) errors(None) {
        real_status(status)?;
        // SAFETY: checked to be a real status; valid per the standard.
        let s = unsafe { &mut *status };
        put_count(s, status_bytes(s), flag != 0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_count_pairs_and_partial_items() {
        let di = handles::datatype(0x8c000001u32 as i32).unwrap(); // MPI_DOUBLE_INT, size 12
        assert_eq!(elements_in(&di, 24), Some(4));
        assert_eq!(elements_in(&di, 32), Some(5), "two pairs and a double");
        assert_eq!(elements_in(&di, 30), None);
        let int = handles::datatype(0x4c000405).unwrap();
        assert_eq!(elements_in(&int, 40), Some(10));
        assert_eq!(elements_in(&int, 6), None);
        assert_eq!(whole_items(&int, 6), None);
        assert_eq!(whole_items(&int, 8), Some(2));
    }

    #[test]
    fn bytes_of_elements_inverts_elements_in() {
        let di = handles::datatype(0x8c000001u32 as i32).unwrap(); // MPI_DOUBLE_INT
        for n in 0..9 {
            let b = bytes_of_elements(&di, n).unwrap();
            assert_eq!(elements_in(&di, b), Some(n), "{n} elements in {b} bytes");
        }
        assert_eq!(bytes_of_elements(&di, 5), Some(32), "two pairs and a double");
        let int = handles::datatype(0x4c000405).unwrap();
        assert_eq!(bytes_of_elements(&int, 10), Some(40));
    }

    #[test]
    fn statuses_carry_large_counts_and_the_cancelled_bit() {
        let mut c = CStatus { count_lo: 0, count_hi_and_cancelled: 0, source: 0, tag: 0, error: 0 };
        let s = Status { bytes: (5u64 << 32 | 7) as usize, cancelled: true, ..Default::default() };
        // SAFETY: a valid status on the stack.
        unsafe { write_status(&mut c, &s) };
        assert_eq!(status_bytes(&c), 5u64 << 32 | 7);
        assert!(c.count_hi_and_cancelled < 0, "cancelled is the top bit");
    }
}
