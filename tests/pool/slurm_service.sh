#!/usr/bin/env bash
# A one-node Slurm cluster for the pool tests (CTest fixture), from Debian's slurm-wlm and munge:
# `start DIR` writes a munge key, slurm.conf and gres.conf (two fake GPUs: character devices like
# /dev/null, so that --gres=gpu:1 is scheduled for real) into DIR, starts munged, slurmctld and slurmd
# on free ports and waits until the node is idle; DIR/env holds SLURM_CONF. `stop DIR` ends them by pid.
# The Unix sockets (munge's, slurmd's spool) live in a short folder under /tmp named in DIR/run: a socket's
# path may not pass 108 bytes, and DIR sits in the build tree of a checkout whose path may be long.
set -euo pipefail
cmd="$1"; dir="$2"
stop() {
    for d in slurmd slurmctld munged; do
        if [ -f "$dir/$d.pid" ]; then kill "$(cat "$dir/$d.pid")" 2>/dev/null || true; fi
    done
    for d in slurmd slurmctld munged; do
        if [ -f "$dir/$d.pid" ]; then
            pid=$(cat "$dir/$d.pid")
            for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -9 "$pid" 2>/dev/null || true
            rm -f "$dir/$d.pid"
        fi
    done
    if [ -f "$dir/run" ]; then rm -rf "$(cat "$dir/run")"; rm -f "$dir/run"; fi
}
free_port() {
    for p in $(seq "$1" "$2"); do
        if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo "$p"; return; fi
    done
}
case "$cmd" in
start)
    for b in munged slurmctld slurmd; do
        command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] || {
            echo "slurm_service: $b missing (scripts/install-deps.sh installs slurmctld slurmd slurm-client munge)" >&2; exit 1; }
    done
    export PATH="$PATH:/usr/sbin"
    stop
    rm -rf "$dir"; mkdir -p "$dir"/{state,log,dev}; chmod 700 "$dir"
    run=$(mktemp -d /tmp/kl-slurm.XXXXXX) # /tmp, not $TMPDIR: its path may be long too
    echo "$run" > "$dir/run"; mkdir -p "$run/spool"
    head -c 1024 /dev/urandom > "$dir/munge.key"; chmod 400 "$dir/munge.key"
    munged -f --socket="$run/munge.sock" --key-file="$dir/munge.key" --log-file="$dir/log/munged.log" \
        --pid-file="$dir/munged.pid" --seed-file="$dir/munged.seed"
    mknod "$dir/dev/gpu0" c 1 3; mknod "$dir/dev/gpu1" c 1 3
    host=$(hostname -s)
    ctl=$(free_port 6917 6960); node=$(free_port $((ctl + 1)) 6990)
    cat > "$dir/slurm.conf" <<CONF
ClusterName=kltest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctl
SlurmdPort=$node
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$run/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$run/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
GresTypes=gpu
SlurmctldTimeout=10
SlurmdTimeout=10
InactiveLimit=0
KillWait=2
MinJobAge=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=kltest Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
    echo "NodeName=$host Name=gpu File=$dir/dev/gpu[0-1]" > "$dir/gres.conf"
    export SLURM_CONF="$dir/slurm.conf"
    slurmctld -i
    slurmd
    for _ in $(seq 100); do
        state=$(sinfo -h -N -o %t 2>/dev/null || true)
        [ "$state" = idle ] && break
        sleep 0.1
    done
    [ "$state" = idle ] || { echo "slurm_service: the node is '$state', not idle" >&2; tail -5 "$dir"/log/*.log >&2; exit 1; }
    printf 'SLURM_CONF=%s\n' "$SLURM_CONF" > "$dir/env"
    ;;
stop) stop ;;
*) echo "usage: slurm_service.sh start|stop DIR" >&2; exit 2 ;;
esac
