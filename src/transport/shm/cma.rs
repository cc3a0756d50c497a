//! Cross-memory copies (`process_vm_readv`, `process_vm_writev`): a
//! message read straight out of its sender's buffer, or written into its
//! receiver's.

/// Copy the first `n` bytes of a packed message at `remote_addr` in
/// process `pid` straight into items of `ty` at `dst`, scattering into the
/// type's blocks with one cross-memory read per batch of blocks. False if
/// the kernel refuses (ptrace policy, EPERM) or the copy is short; the
/// caller then falls back to pushed data.
///
/// # Safety
/// `dst` must be writable over the items the `n` bytes cover.
pub unsafe fn read_remote_into(
    pid: i32,
    remote_addr: u64,
    n: usize,
    ty: &crate::datatype::TypeInfo,
    dst: *mut u8,
) -> bool {
    const IOV_MAX: usize = 1024;
    let mut local: Vec<libc::iovec> = Vec::new();
    let mut done = 0usize;
    let mut batch_start = 0usize;
    let flush = |local: &mut Vec<libc::iovec>, from: usize, to: usize| -> bool {
        let mut remote =
            libc::iovec { iov_base: (remote_addr as usize + from) as *mut libc::c_void, iov_len: to - from };
        let mut iov = local.as_mut_slice();
        // The kernel may copy less than asked; advance and retry.
        while remote.iov_len > 0 {
            // SAFETY: `local` describes writable memory of the receive
            // buffer (caller's contract); the kernel checks the remote range.
            let got = unsafe { libc::process_vm_readv(pid, iov.as_ptr(), iov.len() as u64, &remote, 1, 0) };
            if got <= 0 {
                return false;
            }
            let mut got = got as usize;
            remote.iov_base = (remote.iov_base as usize + got) as *mut libc::c_void;
            remote.iov_len -= got;
            while got > 0 {
                let first = &mut iov[0];
                let take = got.min(first.iov_len);
                first.iov_base = (first.iov_base as usize + take) as *mut libc::c_void;
                first.iov_len -= take;
                got -= take;
                if first.iov_len == 0 {
                    iov = &mut iov[1..];
                }
            }
        }
        local.clear();
        true
    };
    if ty.is_contiguous() {
        local.push(libc::iovec { iov_base: dst as *mut libc::c_void, iov_len: n });
        return n == 0 || flush(&mut local, 0, n);
    }
    let mut item = 0;
    while done < n {
        for &(off, len) in &ty.blocks {
            let take = len.min(n - done);
            // SAFETY: inside the receive buffer's items (caller's contract).
            let base = dst.wrapping_offset(item as isize * ty.extent + off);
            local.push(libc::iovec { iov_base: base as *mut libc::c_void, iov_len: take });
            done += take;
            if local.len() == IOV_MAX || done == n {
                if !flush(&mut local, batch_start, done) {
                    return false;
                }
                batch_start = done;
            }
            if done == n {
                break;
            }
        }
        item += 1;
    }
    true
}

/// Copy `out.len()` bytes at `remote_addr` in process `pid` into `out`.
/// False if the kernel refuses or the copy is short.
pub fn read_remote(pid: i32, remote_addr: u64, out: &mut [u8]) -> bool {
    // SAFETY: `out` is writable over its length, contiguous bytes.
    unsafe { read_remote_into(pid, remote_addr, out.len(), &crate::datatype::byte(), out.as_mut_ptr()) }
}

/// Write `src` into process `pid` at `remote_addr` with cross-memory
/// writes. False if refused or short.
pub fn write_remote(pid: i32, remote_addr: u64, src: &[u8]) -> bool {
    let mut done = 0usize;
    while done < src.len() {
        let local = libc::iovec { iov_base: src[done..].as_ptr() as *mut libc::c_void, iov_len: src.len() - done };
        let remote =
            libc::iovec { iov_base: (remote_addr as usize + done) as *mut libc::c_void, iov_len: src.len() - done };
        // SAFETY: `local` describes memory we own; the kernel checks the
        // remote range and our permission to write it.
        let n = unsafe { libc::process_vm_writev(pid, &local, 1, &remote, 1, 0) };
        if n <= 0 {
            return false;
        }
        done += n as usize;
    }
    true
}
