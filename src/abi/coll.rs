//! Collective operations: argument checks and buffer staging around the
//! algorithms in `coll`.

use super::handles;
use super::{mpi_fn, with_state};
use crate::coll;
use crate::datatype::{pack, TypeInfo};
use crate::err;
use crate::error::MpiResult;
use std::os::raw::{c_int, c_void};

/// MPI_IN_PLACE
const IN_PLACE: usize = usize::MAX;

fn check_root(size: usize, root: c_int) -> MpiResult<usize> {
    if root < 0 || root as usize >= size {
        return err!(
            Root,
            "root {root} is out of range: the communicator has {size} ranks (0..{})",
            size - 1
        );
    }
    Ok(root as usize)
}

fn check_count(count: c_int, datatype: c_int) -> MpiResult<(usize, &'static TypeInfo)> {
    if count < 0 {
        return err!(Count, "count {count} is negative");
    }
    Ok((count as usize, handles::datatype(datatype)?))
}

fn check_buf(buf: *const c_void, count: usize, ty: &TypeInfo, name: &str) -> MpiResult<()> {
    if buf.is_null() && count > 0 && ty.size > 0 {
        return err!(Buffer, "{name} is a null pointer but count is {count}");
    }
    Ok(())
}

/// Bytes spanned in memory by `count` items: what reductions read and write.
fn span(ty: &TypeInfo, count: usize) -> usize {
    ty.extent * count
}

mpi_fn! {
    Initialized fn MPI_Barrier / PMPI_Barrier(comm: c_int) errors(Some(comm)) {
        with_state(|st| {
            let c = handles::comm(st, comm)?.clone();
            coll::barrier(&mut st.engine, &c)
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Bcast / PMPI_Bcast(buffer: *mut c_void, count: c_int, datatype: c_int, root: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| {
            let c = handles::comm(st, comm)?.clone();
            let (count, ty) = check_count(count, datatype)?;
            let root = check_root(c.size(), root)?;
            check_buf(buffer, count, ty, "buffer")?;
            let len = ty.size * count;
            if ty.is_contiguous() {
                // SAFETY: the user buffer holds `count` contiguous items.
                let b = unsafe { std::slice::from_raw_parts_mut(buffer as *mut u8, len) };
                return coll::bcast(&mut st.engine, &c, b, root);
            }
            let mut packed = vec![0u8; len];
            if c.rank == root {
                // SAFETY: the root's buffer holds `count` items.
                unsafe { pack::pack(ty, count, buffer as *const u8, &mut packed) };
            }
            coll::bcast(&mut st.engine, &c, &mut packed, root)?;
            if c.rank != root {
                // SAFETY: the buffer holds `count` items.
                unsafe { pack::unpack(ty, &packed, buffer as *mut u8) };
            }
            Ok(())
        })
    }
}

/// Shared by Reduce and Allreduce: the reduction input, in memory layout.
fn input(sendbuf: *const c_void, recvbuf: *mut c_void, n: usize) -> Vec<u8> {
    let src = if sendbuf as usize == IN_PLACE {
        recvbuf as *const u8
    } else {
        sendbuf as *const u8
    };
    // SAFETY: the caller checked the buffer for `n` bytes of items.
    unsafe { std::slice::from_raw_parts(src, n) }.to_vec()
}

/// Write a reduction result into the receive buffer, data blocks only
/// (gaps inside pair types keep the caller's bytes).
fn output(recvbuf: *mut c_void, ty: &TypeInfo, count: usize, data: &[u8]) {
    let mut packed = vec![0u8; ty.size * count];
    // SAFETY: `data` holds `count` items in memory layout.
    unsafe {
        pack::pack(ty, count, data.as_ptr(), &mut packed);
        pack::unpack(ty, &packed, recvbuf as *mut u8);
    }
}

mpi_fn! {
    Initialized fn MPI_Reduce / PMPI_Reduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: c_int, op: c_int, root: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| {
            let c = handles::comm(st, comm)?.clone();
            let (count, ty) = check_count(count, datatype)?;
            let op = handles::op(op)?;
            op.check(ty)?;
            let root = check_root(c.size(), root)?;
            let in_place = sendbuf as usize == IN_PLACE;
            if in_place && c.rank != root {
                return err!(Buffer, "MPI_IN_PLACE is only allowed as sendbuf at the root of MPI_Reduce");
            }
            if !in_place {
                check_buf(sendbuf, count, ty, "sendbuf")?;
            }
            if c.rank == root {
                check_buf(recvbuf, count, ty, "recvbuf")?;
            }
            let mut data = input(sendbuf, recvbuf, span(ty, count));
            coll::reduce(&mut st.engine, &c, &mut data, ty, op, root)?;
            if c.rank == root {
                output(recvbuf, ty, count, &data);
            }
            Ok(())
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Allreduce / PMPI_Allreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: c_int, op: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| {
            let c = handles::comm(st, comm)?.clone();
            let (count, ty) = check_count(count, datatype)?;
            let op = handles::op(op)?;
            op.check(ty)?;
            if sendbuf as usize != IN_PLACE {
                check_buf(sendbuf, count, ty, "sendbuf")?;
            }
            check_buf(recvbuf, count, ty, "recvbuf")?;
            let mut data = input(sendbuf, recvbuf, span(ty, count));
            coll::allreduce(&mut st.engine, &c, &mut data, ty, op)?;
            output(recvbuf, ty, count, &data);
            Ok(())
        })
    }
}
