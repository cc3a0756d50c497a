#!/usr/bin/env python3
"""Checks of jobs that span hosts, and of launches by other process managers:

- two network namespaces joined by a veth pair act as two hosts; our
  mpiexec starts ranks in them through an ssh-like launcher
  (`ip netns exec`), ranks of one namespace share memory and the two
  talk TCP (also with OXMPI_TRANSPORT=tcp, and from a hostfile);
- a rank dying on the other host (also mid-message) ends the job promptly,
  leaving no process;
- strangers connecting to a rank's port with garbage or a wrong key change
  nothing in the running job, and are counted;
- MPICH's mpiexec (Hydra) starts oxmpi programs, PMI_FD and PMI_PORT modes,
  and with -bind-to core (ranks bound one to a core count as many cores);
- Slurm's `srun --mpi=pmi2` starts them (PMI-2), when a Slurm cluster
  answers (tools/slurm_single_node.sh makes one on this machine).

Needs root for the namespaces (`ip netns`); without it those checks are
reported as skipped. Ends with "N passed, M failed".
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
BIN = os.path.join(BUILD, "bin")
TESTS = os.path.join(ROOT, "c-tests", "bin")
HOSTS = ("oxh1", "oxh2")
results = []


def check(name, cond, detail=""):
    results.append(cond)
    print(f"{'ok  ' if cond else 'FAIL'} {name}{'' if cond else ': ' + detail[-3000:]}", flush=True)


def run(args, timeout=120, **kw):
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(args, -1, e.stdout or "", f"hung for {timeout} s")


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True, capture_output=True)


def make_hosts():
    """Two namespaces with a veth pair between them, 10.199.0.1 and .2."""
    remove_hosts()
    sh("ip netns add oxh1 && ip netns add oxh2")
    sh("ip link add oxv1 netns oxh1 type veth peer name oxv2 netns oxh2")
    sh("ip -n oxh1 addr add 10.199.0.1/24 dev oxv1 && ip -n oxh2 addr add 10.199.0.2/24 dev oxv2")
    for ns, dev in (("oxh1", "oxv1"), ("oxh2", "oxv2")):
        sh(f"ip -n {ns} link set lo up && ip -n {ns} link set {dev} up")


def remove_hosts():
    for ns in HOSTS:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def leftovers(exe):
    procs = subprocess.run(["pgrep", "-f", exe], capture_output=True, text=True).stdout.split()
    shm = [f for f in os.listdir("/dev/shm") if f.startswith("oxmpi")]
    return procs, shm


def host_checks(tmp):
    launcher = os.path.join(tmp, "nsrun")
    with open(launcher, "w") as f:
        f.write('#!/bin/sh\n# like ssh: nsrun HOST COMMAND runs COMMAND with sh on HOST (a namespace)\n'
                'ns=$1; shift\nexec ip netns exec "$ns" sh -c "$*"\n')
    os.chmod(launcher, 0o755)
    mpiexec = ["ip", "netns", "exec", "oxh1", os.path.join(BIN, "mpiexec"), "--launcher", launcher]
    two = mpiexec + ["-hosts", "oxh1,oxh2", "-ppn", "2", "-n", "4"]

    where = os.path.join(tmp, "where")
    run([os.path.join(BIN, "mpicc"), "-o", where, os.path.join(ROOT, "c-tests", "hosts", "where.c")])
    r = run(two + [where])
    lines = sorted(r.stdout.splitlines())
    nets = [l.split()[5] for l in lines if l.startswith("rank")]
    check("ranks are placed two per host by -ppn 2",
          len(nets) == 4 and nets[0] == nets[1] and nets[2] == nets[3] and nets[0] != nets[2], r.stdout + r.stderr)
    check("MPI_COMM_TYPE_SHARED groups the ranks of each host", r.stdout.count("2 on this host") == 4, r.stdout)
    check("MPI_COMM_TYPE_HW_UNGUIDED splits the world by host, naming mpi_shared_memory in the info",
          r.stdout.count("unguided 2 by mpi_shared_memory") == 4, r.stdout)

    hostfile = os.path.join(tmp, "hosts")
    with open(hostfile, "w") as f:
        f.write("# two hosts\noxh1:1\noxh2 slots=3\n")
    r = run(mpiexec + ["-f", hostfile, "-n", "4", where])
    per = sorted(l.split()[1] + ":" + l.split()[6] for l in r.stdout.splitlines() if l.startswith("rank"))
    check("a hostfile's slots place 1 rank on the first host and 3 on the second",
          per == ["0:1", "1:3", "2:3", "3:3"], r.stdout + r.stderr)

    for t in ("sendrecv_basic", "sendrecv_long", "coll_basic", "coll_short", "coll_nonblocking", "intercomm", "probe"):
        exe = os.path.join(TESTS, t)
        for transport in ("auto", "tcp"):
            env = dict(os.environ, OXMPI_TRANSPORT=transport)
            r = run(two + [exe], env=env)
            check(f"{t} on two hosts, 2 ranks each, OXMPI_TRANSPORT={transport}",
                  r.returncode == 0 and "No Errors" in r.stdout, r.stdout + r.stderr)

    env = dict(os.environ, OXMPI_TRANSPORT="shm")
    r = run(two + [os.path.join(TESTS, "sendrecv_basic")], env=env)
    check("OXMPI_TRANSPORT=shm refuses a job on two hosts",
          r.returncode != 0 and "runs on another host" in r.stderr, r.stderr)

    job = os.path.join(tmp, "tcp_job")
    run([os.path.join(BIN, "mpicc"), "-o", job, os.path.join(ROOT, "c-tests", "hosts", "tcp_job.c")])
    exe = os.path.join(TESTS, "fault_segv")
    t0 = time.time()
    r = run(two + [exe])
    took = time.time() - t0
    procs, shm = leftovers(exe)
    check("a rank killed on one host ends the job on both, promptly",
          r.returncode == 139 and "rank 1 was killed by signal 11" in r.stderr and took < 5, f"{r.returncode} {took:.1f}s {r.stderr}")
    check("no process or segment is left after a failure across hosts", not procs and not shm, f"{procs} {shm}")

    t0 = time.time()
    r = run(two + [job, "vanish"])
    took = time.time() - t0
    procs, shm = leftovers(job)
    check("a rank vanishing mid-message on the other host ends the job, promptly",
          r.returncode != 0 and "rank 3 was killed by signal 9" in r.stderr and "went on" not in r.stdout and took < 5,
          f"{r.returncode} {took:.1f}s {r.stdout} {r.stderr}")
    check("no process or segment is left after the vanishing", not procs and not shm, f"{procs} {shm}")

    # a signal to mpiexec ends the ranks on both hosts
    spin = os.path.join(tmp, "io")
    run([os.path.join(BIN, "mpicc"), "-o", spin, os.path.join(ROOT, "c-tests", "launcher", "io.c")])
    p = subprocess.Popen(two + [spin, "99"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2)
    p.send_signal(signal.SIGTERM)
    try:
        out, err = p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    time.sleep(0.3)
    procs, shm = leftovers(spin)
    check("SIGTERM to mpiexec ends the ranks on both hosts", p.returncode != 0 and not procs and not shm,
          f"{p.returncode} {procs} {shm} {err}")

    # stdin reaches rank 0 on the other host; -l labels lines from both hosts
    r = run(mpiexec + ["-hosts", "oxh2,oxh1", "-l", "-n", "2", spin], input="hello\nthere\n")
    check("stdin reaches rank 0 on another host and -l labels every host's lines",
          "[0] stdin: hello" in r.stdout and "[0] stdin: there" in r.stdout and "[1] rank 1 value" in r.stdout
          and r.returncode == 0, r.stdout + r.stderr)

    # ranks started by a launcher that lets go of them (as ssh does: killing
    # the ssh client does not kill the remote program) end once mpiexec is
    # gone, seeing their PMI connection close
    detach = os.path.join(tmp, "nsdetach")
    with open(detach, "w") as f:
        f.write('#!/bin/sh\nns=$1; shift\nsetsid ip netns exec "$ns" sh -c "$*" </dev/null &\nwait\n')
    os.chmod(detach, 0o755)
    cmd = ["ip", "netns", "exec", "oxh1", os.path.join(BIN, "mpiexec"), "--launcher", detach,
           "-hosts", "oxh1,oxh2", "-ppn", "2", "-n", "4", spin, "98"]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2)
    before, _ = leftovers(spin)
    p.kill()
    p.wait()
    deadline = time.time() + 10
    while time.time() < deadline and leftovers(spin)[0]:
        time.sleep(0.2)
    procs, _ = leftovers(spin)
    subprocess.run(["pkill", "-9", "-f", spin])
    check("ranks a launcher let go of end when mpiexec is killed", len(before) >= 4 and not procs, f"{before} {procs}")

    # strangers knock on every rank's port while the job waits
    go = os.path.join(tmp, "go")
    env = dict(os.environ, OXMPI_DEBUG="1", OXMPI_TRANSPORT="tcp")
    p = subprocess.Popen(two + [job, "wait", go], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ports, err = [], ""
    deadline = time.time() + 30
    while len(ports) < 4 and time.time() < deadline:
        line = p.stderr.readline()
        err += line
        m = re.search(r"TCP on ([\d.]+):(\d+)", line)
        if m:
            ports.append((m.group(1), int(m.group(2))))
    knocks = 0
    for ip, port in ports:
        ns = "oxh1" if ip.endswith(".1") else "oxh2"
        # garbage, then a hello with the right magic and a wrong key
        script = ("import socket,sys\n"
                  f"for data in (b'GET / HTTP/1.0\\r\\n\\r\\n' + bytes(300), b'oxmpiTC1' + bytes(32) + bytes(4) + bytes(56)):\n"
                  f"    s = socket.create_connection(('{ip}', {port})); s.sendall(data); s.close()\n")
        rr = run(["ip", "netns", "exec", ns, sys.executable, "-c", script])
        knocks += 2 if rr.returncode == 0 else 0
    open(go, "w").close()
    try:
        out, rest = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, rest = p.communicate()
    err += rest
    refused = sum(int(n) for n in re.findall(r"refused (\d+) TCP connection", err))
    check("strangers with garbage or a wrong key change nothing in the job",
          len(ports) == 4 and knocks == 8 and p.returncode == 0 and "No Errors" in out, f"{ports} {knocks} {out} {err}")
    check("every stranger's connection is closed and counted", refused == 8, err)


def hydra_checks():
    hydra = shutil.which("mpiexec.mpich")
    if not hydra:
        check("MPICH's mpiexec is installed (make setup)", False)
        return
    for t in ("sendrecv_long", "coll_basic", "comm_basic"):
        exe = os.path.join(TESTS, t)
        for mode in ([], ["-pmi-port"]):
            for transport in ("auto", "tcp"):
                env = dict(os.environ, OXMPI_TRANSPORT=transport)
                r = run([hydra] + mode + ["-n", "3", exe], env=env)
                check(f"Hydra starts {t} ({'PMI_PORT' if mode else 'PMI_FD'}, OXMPI_TRANSPORT={transport})",
                      r.returncode == 0 and "No Errors" in r.stdout, r.stdout + r.stderr)
    # Hydra binding each rank to a core of its own: the host has as many
    # cores as the ranks' masks cover together, and long collectives agree
    cpus = len(os.sched_getaffinity(0))
    for n in (2, 4):
        r = run([hydra, "-bind-to", "core", "-n", str(n), os.path.join(TESTS, "coll_pieces")],
                env=dict(os.environ, OXMPI_DEBUG="1"))
        want = f"{n} ranks on {min(n, cpus)} cores of this host"
        check(f"Hydra -bind-to core, {n} ranks: {min(n, cpus)} cores, long collectives agree",
              r.returncode == 0 and "No Errors" in r.stdout and r.stderr.count(want) == n, r.stdout + r.stderr)
    r = run([hydra, "-n", "2", os.path.join(TESTS, "fault_segv")])
    check("under Hydra a crashing rank ends the job", r.returncode != 0, str(r.returncode))
    # Hydra sweeps nothing: a rank that crashes as soon as MPI_Init returns
    # must find the segment's name gone already (its last mapper removed
    # it), though the kill may reach rank 0 before it got to that itself
    # (once in about 40 runs, before the last mapper removed it)
    left = []
    for _ in range(12):
        run([hydra, "-n", "2", os.path.join(TESTS, "fault_segv")])
        left += [f for f in os.listdir("/dev/shm") if f.startswith("oxmpi")]
    check("under Hydra ranks crashing after MPI_Init leave no segment (12 runs)", not left, str(left))
    # A rank killed inside MPI_Init, as it opens its host's segment by name
    # (c-tests/hosts/die_joining.c, loaded ahead of oxmpi), while the name
    # must still exist: Hydra then SIGKILLs the creator, whose sentry
    # process removes the name; our mpiexec sweeps it. Neither leaves a
    # name or a live process.
    exe = os.path.join(TESTS, "coll_basic")
    for name, with_preload in (("Hydra", lambda lib, k, v: [hydra, "-genv", "LD_PRELOAD", lib, "-genv", k, v]),
                               ("mpiexec", with_mpiexec)):
        launcher = with_preload(preload("die_joining"), "DIE_JOINING_RANK", "1")
        left, codes, alive = [], [], []
        for n in (2, 3, 4) * 2:
            codes.append(run(launcher + ["-n", str(n), exe]).returncode)
            time.sleep(0.2)
            procs, shm = leftovers(exe)
            left, alive = left + shm, alive + procs
        check(f"under {name} a rank killed inside MPI_Init, its host's segment named, ends the job and leaves "
              "no segment and no process (2-4 ranks, 6 runs)", not left and not alive and all(codes),
              f"left {left}, alive {alive}, exit codes {codes}")


def preload(name):
    """c-tests/hosts/NAME.c built as a library to load ahead of oxmpi:
    die_joining kills rank DIE_JOINING_RANK as it opens its host's segment
    by name; late_reply has rank LATE_REPLY_RANK see its host's ranks end
    before the launcher's reply to MPI_Init's waits; exit_early ends task
    EXIT_EARLY_RANK (srun's numbering) before main."""
    lib = os.path.join(BUILD, f"{name}.so")
    run(["cc", "-shared", "-fPIC", "-O1", "-o", lib, os.path.join(ROOT, "c-tests", "hosts", f"{name}.c"), "-ldl"])
    return lib


def with_mpiexec(lib, key, value):
    """Our mpiexec, `lib` preloaded in its ranks, `key`=`value` set."""
    return [os.path.join(BIN, "mpiexec"), "-env", "LD_PRELOAD", lib, "-env", key, value]


def exits_as_init_returns(launcher, name, ends):
    """Rank 1 of fault_no_finalize exits as MPI_Init returns, while rank 2
    (late_reply preloaded) still waits for the reply to MPI_Init's last
    barrier, which rank 1 asked for too: rank 2's MPI_Init does not fail
    on that; the job ends on rank 1's missing MPI_Finalize (`ends`).
    (Hydra kills the job as rank 1 exits, so shows nothing either way.)"""
    r = run(launcher(preload("late_reply"), "LATE_REPLY_RANK", "2") + ["-n", "4", os.path.join(TESTS, "fault_no_finalize")],
            timeout=60)
    check(f"under {name} a rank that exits as MPI_Init returns, before another rank has the launcher's last reply, "
          "fails no MPI_Init", r.returncode != 0 and "during MPI_Init" not in r.stderr and ends in r.stderr,
          f"{r.returncode} {r.stderr}")


def slurm_checks():
    if not shutil.which("srun") or run(["sinfo", "-h", "-o", "%T"], timeout=20).stdout.strip() not in ("idle", "mixed", "allocated"):
        print("skip Slurm checks: no Slurm cluster answers (tools/slurm_single_node.sh makes one)")
        return
    srun = ["srun", "--mpi=pmi2", "-O"]
    for t, n, transport in (("coll_basic", 2, "auto"), ("sendrecv_long", 4, "auto"), ("coll_nonblocking", 3, "tcp"),
                            ("comm_basic", 3, "auto")):
        env = dict(os.environ, OXMPI_TRANSPORT=transport)
        r = run(srun + ["-n", str(n), os.path.join(TESTS, t)], env=env)
        check(f"srun --mpi=pmi2 -n {n} starts {t} (OXMPI_TRANSPORT={transport})",
              r.returncode == 0 and "No Errors" in r.stdout, r.stdout + r.stderr)
    t0 = time.time()
    r = run(srun + ["-n", "2", os.path.join(TESTS, "fault_segv")])
    took = time.time() - t0
    check("under Slurm (which leaves the other tasks running) a crashed rank's peers end the job, promptly",
          r.returncode != 0 and "ended before MPI_Finalize" in r.stderr and took < 10, f"{r.returncode} {took:.1f}s {r.stderr}")
    # killed inside MPI_Init, as it opens its host's segment by name: the
    # others wait in a PMI fence srun does not end by itself; they watch
    # their host's ranks and end the job (and the sentry removes the name).
    # A task that ends before MPI_Init (before the ranks trade process
    # ids): the others find it missing among slurmstepd's children, or
    # watch it end, and end the job.
    exe = os.path.join(TESTS, "coll_basic")
    killed = ("rank 1 on this host ended during MPI_Init",)
    early = ("ended before MPI_Init's first exchange", "on this host ended during MPI_Init")
    for what, lib, var, n, who, says in [("a rank killed inside MPI_Init", "die_joining", "DIE_JOINING_RANK", n, 1, killed)
                                         for n in (2, 3, 4)] + \
            [(f"a task that ends before MPI_Init (rank {who} of {n})", "exit_early", "EXIT_EARLY_RANK", n, who, early)
             for n, who in ((2, 1), (3, 0), (4, 2))]:
        t0 = time.time()
        r = run(srun + ["-n", str(n), "--export", f"ALL,LD_PRELOAD={preload(lib)},{var}={who}", exe], timeout=60)
        took = time.time() - t0
        time.sleep(0.2)
        alive, left = leftovers(exe)
        check(f"under Slurm {what} ends the job promptly, leaving no segment and no process ({n} ranks)",
              r.returncode != 0 and any(m in r.stderr for m in says) and took < 10 and not left and not alive,
              f"{r.returncode} {took:.1f}s left {left} alive {alive} {r.stderr}")
    exits_as_init_returns(lambda lib, k, v: srun + ["--export", f"ALL,LD_PRELOAD={lib},{k}={v}"], "srun",
                          "ended before MPI_Finalize")


def bad_input_checks():
    mpiexec = os.path.join(BIN, "mpiexec")
    exe = os.path.join(TESTS, "sendrecv_basic")
    for args, text in ((["-hosts", "a:0"], "is not host or host:slots"),
                       (["-f", "/nonexistent/hosts"], "cannot read /nonexistent/hosts"),
                       (["-ppn", "0"], "-ppn needs a positive number"),
                       (["-hosts", "some-remote-host", "--launcher", "/nonexistent/launcher"],
                        "cannot start /nonexistent/launcher")):
        r = run([mpiexec] + args + ["-n", "1", exe])
        check(f"mpiexec {' '.join(args)}: a clear error", r.returncode != 0 and text in r.stderr, r.stderr)
    for env, text in (({"OXMPI_TRANSPORT": "udp"}, "OXMPI_TRANSPORT=udp is not one of auto, shm, tcp"),
                      ({"OXMPI_TRANSPORT": "tcp", "OXMPI_IFACE": "nope0"}, "OXMPI_IFACE=nope0: no such interface"),
                      ({"OXMPI_TRANSPORT": "tcp", "OXMPI_ADDR": "no.such.host.invalid"}, "neither an IP address nor a host name")):
        r = run([mpiexec, "-n", "2", exe], env=dict(os.environ, **env))
        check(f"{' '.join(k + '=' + v for k, v in env.items())}: MPI_Init fails with one clear line",
              r.returncode != 0 and text in r.stderr, r.stderr)
    # a failed MPI_Init leaves no segment, also under a launcher that sweeps
    # nothing (Hydra), and mpiexec whose reader went away still sweeps
    env = dict(os.environ, OXMPI_TRANSPORT="tcp", OXMPI_IFACE="nope0")
    if shutil.which("mpiexec.mpich"):
        run(["mpiexec.mpich", "-n", "2", exe], env=env)
    subprocess.run(f"{mpiexec} -n 2 {exe} 2>&1 | head -1", shell=True, env=env, capture_output=True)
    time.sleep(0.3)
    left = [f for f in os.listdir("/dev/shm") if f.startswith("oxmpi")]
    check("a failed MPI_Init leaves no segment (Hydra, and mpiexec piped into head)", not left, str(left))


def main():
    tmp = tempfile.mkdtemp(prefix="oxmpi-hosts-")
    bad_input_checks()
    hydra_checks()
    exits_as_init_returns(with_mpiexec, "mpiexec", "rank 1 exited without calling MPI_Finalize")
    slurm_checks()
    if os.geteuid() != 0 or not shutil.which("ip"):
        print("skip two-host checks: they need root and ip (iproute2) for network namespaces")
    else:
        try:
            make_hosts()
            host_checks(tmp)
        finally:
            remove_hosts()
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"{results.count(True)} passed, {results.count(False)} failed")
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
