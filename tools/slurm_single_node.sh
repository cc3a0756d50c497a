#!/bin/sh
# A one-node Slurm cluster on this machine, for trying `srun --mpi=pmi2`
# with oxmpi programs (tools/test_hosts.py runs its Slurm checks when one
# answers). Installs Debian's slurm-wlm, writes /etc/slurm/slurm.conf if
# there is none (or ours), and starts munged, slurmctld and slurmd.
# Run as root on a machine you can spare: it is a real cluster daemon set.
set -e
MARK="# written by oxmpi tools/slurm_single_node.sh"
if ! command -v slurmd >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge
fi
conf=/etc/slurm/slurm.conf
if [ -f "$conf" ] && ! grep -q "$MARK" "$conf"; then
    echo "slurm_single_node: $conf exists and is not ours; leaving it" >&2
else
    host=$(hostname -s)
    cpus=$(nproc)
    mkdir -p /etc/slurm /var/lib/slurm/slurmd /var/lib/slurm/slurmctld /var/log/slurm
    cat > "$conf" <<EOF
$MARK
ClusterName=oxmpi
SlurmctldHost=$host
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SlurmUser=root
SlurmdUser=root
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmdSpoolDir=/var/lib/slurm/slurmd
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/linear
MpiDefault=none
# a failed task's step ends within seconds (the default waits 30 s)
KillWait=2
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
fi
[ -f /etc/munge/munge.key ] || { mungekey --create 2>/dev/null || create-munge-key; }
mkdir -p /run/munge && chown munge:munge /run/munge /etc/munge/munge.key 2>/dev/null || true
pgrep -x munged >/dev/null || su -s /bin/sh munge -c /usr/sbin/munged
pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd
for _ in $(seq 1 30); do
    if sinfo -h -o %T 2>/dev/null | grep -q idle; then
        echo "slurm_single_node: $(sinfo -h -o '%P %D %T %N')"
        exit 0
    fi
    sleep 1
done
echo "slurm_single_node: the node did not come up idle; see /var/log/slurm/" >&2
exit 1
