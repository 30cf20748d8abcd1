#!/bin/sh
# tests/slurm/up.sh DIR: a private one-node Slurm cluster for the Slurm test.
#
# Everything lives in DIR (an empty directory, made by the caller): slurm.conf, a munge
# key and socket, the daemons' state, spool, pid and log files.  Nothing under /etc is
# read or written, so a Slurm or munge the machine already runs is left alone: the
# clients find this cluster through SLURM_CONF=DIR/slurm.conf.  The machine is the
# controller and the only compute node (partition "debug"); processes are tracked
# without cgroups (proctrack/linuxproc), CPUs allocated by select/cons_tres.
#
# munged runs as the munge user, as Debian's service does: it refuses a key that
# belongs to another user, root included.  The PIDs of the three daemons go to
# DIR/up.state; tests/slurm/down.sh DIR stops exactly those.
#
# Environment: SLURM_TEST_PORT (slurmctld's port, slurmd takes the next; default 16817),
# SLURM_TEST_TIMEOUT (seconds to wait for each daemon and the node; default 60).
# Exit: 0 up and idle, 77 skipped (not root, packages missing), 1 failed (logs on stderr).
set -eu

DIR=${1:?usage: up.sh DIR}
PORT=${SLURM_TEST_PORT:-16817}
TIMEOUT=${SLURM_TEST_TIMEOUT:-60}
CONF=$DIR/slurm.conf
SOCKET=$DIR/munge/munge.socket
STATE=$DIR/up.state

say() { printf 'slurm up: %s\n' "$*"; }
logs() {
  for f in "$DIR"/log/*.log "$DIR"/munge/munged.log; do
    [ -s "$f" ] || continue
    printf -- '---- last lines of %s\n' "$f"
    tail -n 15 "$f"
  done
}
die() { printf 'slurm up: %s\n' "$*" >&2; logs >&2; exit 1; }

[ "$(id -u)" = 0 ] || { say "skipped: needs root"; exit 77; }
for c in munged mungekey munge unmunge slurmctld slurmd sbatch scontrol sinfo squeue runuser; do
  command -v "$c" >/dev/null 2>&1 || { say "skipped: $c is not installed (scripts/setup.sh slurm installs it)"; exit 77; }
done
id munge >/dev/null 2>&1 || { say "skipped: no munge user (the munge package creates it)"; exit 77; }

# alive PID NAME: PID runs NAME and is not a zombie.  (Where PID 1 is not an init, a dead
# daemon may linger as a zombie for a second; it must not count as running.)
alive() {
  [ -n "$1" ] && [ -r "/proc/$1/comm" ] || return 1
  case $(cat "/proc/$1/comm" 2>/dev/null) in "$2"*) ;; *) return 1 ;; esac
  case $(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) in Z|X|'') return 1 ;; esac
}

# until_ok SECONDS WHAT PID NAME COMMAND...: polls COMMAND on a wall-clock deadline (one
# failing munge call alone can retry for seconds), and gives up at once if the daemon died.
until_ok() {
  secs=$1 what=$2 pid=$3 name=$4
  shift 4
  deadline=$(($(date +%s) + secs))
  until "$@" >/dev/null 2>&1; do
    [ "$pid" = - ] || alive "$pid" "$name" || die "$name died while waiting for $what"
    [ "$(date +%s)" -lt "$deadline" ] || die "no $what after ${secs}s"
    sleep 0.2
  done
}

pidfile() { tr -dc '0-9' < "$1" 2>/dev/null || true; }
record() { printf '%s=%s\n' "$1" "$2" >> "$STATE"; }

port_busy() { command -v ss >/dev/null 2>&1 && ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
for p in "$PORT" $((PORT + 1)); do
  port_busy "$p" && die "port $p is in use; choose others with SLURM_TEST_PORT"
done

mkdir -p "$DIR/log" "$DIR/run" "$DIR/ctld" "$DIR/slurmd" "$DIR/munge"
chmod 755 "$DIR"
: > "$STATE"

# ---- munge: a key of its own, owned by the munge user like everything munged touches
mungekey --create --keyfile="$DIR/munge/munge.key" --force >/dev/null 2>&1 ||
  dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 2>/dev/null
chown -R munge:munge "$DIR/munge"
chmod 755 "$DIR/munge"   # munged wants its socket directory searchable by all
chmod 400 "$DIR/munge/munge.key"
runuser -u munge -- munged --socket="$SOCKET" --key-file="$DIR/munge/munge.key" \
  --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" --seed-file="$DIR/munge/munged.seed" \
  </dev/null >"$DIR/log/munged.out" 2>&1 || die "munged did not start"
until_ok "$TIMEOUT" "munged's pid file" - - test -s "$DIR/munge/munged.pid"
MUNGED=$(pidfile "$DIR/munge/munged.pid")
record MUNGED_PID "$MUNGED"
munge_ok() { munge -n -S "$SOCKET" | unmunge -S "$SOCKET"; }
until_ok "$TIMEOUT" "a munge credential" "$MUNGED" munged munge_ok

# ---- slurm.conf
NODE=$(hostname -s)
[ -n "$NODE" ] || die "hostname -s is empty"
MEM=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
# Binding to the loopback address makes slurmctld resolve its own name, which is fatal
# where the name does not resolve: then the daemons listen on every address.
if getent hosts "$NODE" >/dev/null 2>&1; then BIND="CommunicationParameters=NoInAddrAny,NoCtldInAddrAny"
else BIND="# $NODE does not resolve: the daemons listen on every address"; fi
cat > "$CONF" <<CONF
# A one-node cluster for vmxsim's Slurm test (tests/slurm/up.sh)
ClusterName=vmxsimtest
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
$BIND
StateSaveLocation=$DIR/ctld
SlurmdSpoolDir=$DIR/slurmd
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
MailProg=/bin/true
# no cgroups: a container without systemd rarely has a delegated cgroup tree
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
# schedule at once: the defaults batch submissions for 3 s and backfill every 30 s
SchedulerParameters=batch_sched_delay=0,bf_interval=2,sched_min_interval=0
ReturnToService=2
# refuse at submission what can never run here, rather than leaving it pending forever
EnforcePartLimits=ALL
# finished jobs stay visible to scontrol (there is no accounting, hence no sacct)
MinJobAge=600
SlurmdTimeout=60
SlurmctldTimeout=60
InactiveLimit=0
KillWait=5
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$NODE CPUs=$(nproc) RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$CONF"

# ---- the controller (-c: a clean state) and the node
slurmctld -c -f "$CONF" </dev/null >>"$DIR/log/slurmctld.out" 2>&1 || die "slurmctld did not start"
until_ok "$TIMEOUT" "slurmctld's pid file" - - test -s "$DIR/run/slurmctld.pid"
CTLD=$(pidfile "$DIR/run/slurmctld.pid")
record SLURMCTLD_PID "$CTLD"
ctld_up() { scontrol ping | grep -q 'is UP'; }
until_ok "$TIMEOUT" "an answer to scontrol ping" "$CTLD" slurmctld ctld_up

slurmd -N "$NODE" -f "$CONF" </dev/null >>"$DIR/log/slurmd.out" 2>&1 || die "slurmd did not start"
until_ok "$TIMEOUT" "slurmd's pid file" - - test -s "$DIR/run/slurmd.pid"
SLURMD=$(pidfile "$DIR/run/slurmd.pid")
record SLURMD_PID "$SLURMD"
node_idle() { sinfo -h -N -n "$NODE" -o '%T' | grep -qx 'idle'; }
until_ok "$TIMEOUT" "node $NODE idle" "$SLURMD" slurmd node_idle
say "node $NODE idle, partition debug, $(nproc) CPUs, ports $PORT-$((PORT + 1))"
