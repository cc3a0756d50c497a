//! The tasks of this job step on this host, found before MPI_Init's
//! first exchange through the launcher. `srun` leaves the other tasks
//! waiting in the launcher's fence for good when one ends (unless told to
//! kill on a bad exit); after the first exchange the ranks of a host know
//! each other's process ids and watch each other (`Pmi::watch`), but a
//! task that ends before it (it crashed, or left before calling MPI_Init)
//! left the others waiting. Here each task finds its siblings where
//! Slurm starts them, as children of the step's `slurmstepd`, which forks
//! every task of the host before it lets any run its program: a sibling
//! missing from that list has ended already; the others are watched
//! through the first exchange. A task started through a wrapper (whose
//! parent is not `slurmstepd`) finds nothing to watch.

use crate::err;
use crate::error::MpiResult;
use std::time::{Duration, Instant};

/// How long siblings that have not yet started their program (their
/// environment still `slurmstepd`'s) are looked at again for.
const STARTING: Duration = Duration::from_millis(500);

/// The task, as its environment names it.
struct Task {
    job: String,
    step: String,
    rank: Option<usize>,
}

fn task(environ: &[u8]) -> Task {
    let mut t = Task { job: String::new(), step: String::new(), rank: None };
    for var in environ.split(|&b| b == 0) {
        let var = String::from_utf8_lossy(var);
        match var.split_once('=') {
            Some(("SLURM_JOB_ID", v)) => t.job = v.to_string(),
            Some(("SLURM_STEP_ID", v)) => t.step = v.to_string(),
            Some(("SLURM_PROCID", v)) => t.rank = v.parse().ok(),
            _ => {}
        }
    }
    t
}

/// The number of tasks on node `node` of a step laid out as
/// SLURM_STEP_TASKS_PER_NODE says (`2(x3),1`: two on each of the first
/// three nodes, one on the fourth).
fn tasks_on(per_node: &str, node: usize) -> Option<usize> {
    let mut seen = 0;
    for part in per_node.split(',') {
        let (n, times) = match part.split_once("(x") {
            Some((n, t)) => (n.parse().ok()?, t.strip_suffix(')')?.parse().ok()?),
            None => (part.parse().ok()?, 1),
        };
        if node < seen + times {
            return Some(n);
        }
        seen += times;
    }
    None
}

/// The children of process `pid`, over all its threads.
fn children(pid: u32) -> Vec<i32> {
    let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    let mut out = Vec::new();
    for t in threads.flatten() {
        let list = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
        out.extend(list.split_whitespace().filter_map(|p| p.parse::<i32>().ok()));
    }
    out
}

/// Whether /proc/PID/stat's `text` is a process that has ended and
/// waits for its parent to reap it (a zombie: its environment reads
/// empty).
fn zombie(text: &str) -> bool {
    // (the command, in parentheses, may hold spaces and parentheses)
    text.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
}

/// Under `srun`: this host's other tasks of the step (rank, pid), to
/// watch through the first exchange; an error when one has ended
/// already. Elsewhere (another launcher, a wrapper between `slurmstepd`
/// and us, no /proc): none.
pub fn siblings(me: usize) -> MpiResult<Vec<(usize, i32)>> {
    let var = |k: &str| std::env::var(k).ok();
    let (Some(job), Some(step), Some(per_node), Some(node)) =
        (var("SLURM_JOB_ID"), var("SLURM_STEP_ID"), var("SLURM_STEP_TASKS_PER_NODE"), var("SLURM_NODEID"))
    else {
        return Ok(Vec::new());
    };
    let Some(local) = node.parse().ok().and_then(|n| tasks_on(&per_node, n)) else { return Ok(Vec::new()) };
    // SAFETY: getppid takes nothing and cannot fail.
    let parent = unsafe { libc::getppid() } as u32;
    if std::fs::read_to_string(format!("/proc/{parent}/comm")).map(|c| c.trim() != "slurmstepd").unwrap_or(true) {
        return Ok(Vec::new());
    }
    let deadline = Instant::now() + STARTING;
    loop {
        // (a child not yet known as a task: forked, its program not yet
        // started, or its environment unreadable; one that has ended is
        // not counted)
        let (mut found, mut unknown) = (Vec::new(), 0);
        for pid in children(parent).into_iter().filter(|&p| p != std::process::id() as i32) {
            if std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| zombie(&s)) {
                continue;
            }
            let t = std::fs::read(format!("/proc/{pid}/environ")).map(|e| task(&e));
            match t {
                Ok(Task { rank: Some(r), job: j, step: s }) if j == job && s == step && r != me => found.push((r, pid)),
                Ok(Task { rank: Some(_), .. }) => {}
                _ => unknown += 1,
            }
        }
        if found.len() + 1 >= local {
            return Ok(found);
        }
        if unknown > 0 {
            if Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
            // still unknown after all this time: watch those we know
            return Ok(found);
        }
        let gone = local - 1 - found.len();
        return err!(
            Other,
            "{gone} of the {local} tasks srun started on this host ended before MPI_Init's first exchange (rank {me} found {} other{} running)",
            found.len(),
            if found.len() == 1 { "" } else { "s" }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tasks_of_a_node_are_read_from_slurms_layout() {
        assert_eq!(tasks_on("4", 0), Some(4));
        assert_eq!(tasks_on("4", 1), None);
        assert_eq!(tasks_on("2(x3),1", 0), Some(2));
        assert_eq!(tasks_on("2(x3),1", 2), Some(2));
        assert_eq!(tasks_on("2(x3),1", 3), Some(1));
        assert_eq!(tasks_on("3,2(x2)", 2), Some(2));
        assert_eq!(tasks_on("x", 0), None);
    }

    #[test]
    fn a_zombie_is_told_by_its_state() {
        assert!(zombie("4242 (coll_basic) Z 4200 4242 4200 0 -1"));
        assert!(!zombie("4242 (coll_basic) R 4200 4242 4200 0 -1"));
        assert!(zombie("4242 (a (b) c) Z 1 2"));
        assert!(!zombie("4242 (a) Z) S 1 2"));
        assert!(!zombie(""));
        // a child that ended, not yet reaped
        let mut child = std::process::Command::new("true").spawn().expect("true");
        let stat = format!("/proc/{}/stat", child.id());
        let deadline = Instant::now() + Duration::from_secs(5);
        while !std::fs::read_to_string(&stat).is_ok_and(|s| zombie(&s)) {
            assert!(Instant::now() < deadline, "the child never showed as ended");
            std::thread::sleep(Duration::from_millis(5));
        }
        child.wait().expect("reaped");
    }

    #[test]
    fn a_task_is_named_by_its_environment() {
        let t = task(b"PATH=/bin\0SLURM_JOB_ID=12\0SLURM_STEP_ID=0\0SLURM_PROCID=3\0");
        assert_eq!((t.job.as_str(), t.step.as_str(), t.rank), ("12", "0", Some(3)));
        assert_eq!(task(b"SLURM_CONF=/etc/slurm/slurm.conf\0").rank, None);
    }
}
