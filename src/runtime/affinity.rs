//! The calling thread's CPU affinity: the CPUs it may run on, binding it
//! to one, and moving it to one while leaving it free to run on the rest.

use std::mem::size_of;

/// The set of `cpus` (each below CPU_SETSIZE).
fn set_of(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: a zeroed cpu_set_t is an empty set; every CPU is below
    // CPU_SETSIZE (the caller's word, from a mask the kernel gave).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        cpus.iter().for_each(|&c| libc::CPU_SET(c, &mut set));
        set
    }
}

/// The CPUs this thread may run on (its affinity mask), None if the
/// kernel does not say.
pub fn mask() -> Option<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is an empty set; sched_getaffinity
    // writes at most size_of::<cpu_set_t>() bytes into it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return None;
    }
    // SAFETY: `set` is initialised and every index is below CPU_SETSIZE.
    Some((0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect())
}

/// Bind this thread to `cpu` (below CPU_SETSIZE): whether it took.
pub fn bind(cpu: usize) -> bool {
    // SAFETY: a valid set, of its own size.
    unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set_of(&[cpu])) == 0 }
}

/// Move this thread to `cpu`, then let it run on any of `cpus` again: the
/// kernel leaves a thread where it is while the load is even. Not if its
/// mask is no longer `cpus` (the program set its own). Whether it moved.
pub fn move_to(cpu: usize, cpus: &[usize]) -> bool {
    let all = set_of(cpus);
    // SAFETY: a valid set, of its own size.
    mask().is_some_and(|now| now == cpus)
        && bind(cpu)
        && unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &all) == 0 }
}
