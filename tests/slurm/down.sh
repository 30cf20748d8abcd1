#!/bin/sh
# tests/slurm/down.sh DIR: stops the daemons tests/slurm/up.sh DIR started (the PIDs in
# DIR/up.state, each checked to still run the program it started), after cancelling the
# jobs its cluster still knows, so that no job step outlives the controller.
# Exit: 0 stopped (or nothing to stop), 1 a daemon would not die.
set -u
DIR=${1:?usage: down.sh DIR}
STATE=$DIR/up.state
[ -s "$STATE" ] || exit 0
MUNGED_PID='' SLURMCTLD_PID='' SLURMD_PID=''
# shellcheck disable=SC1090  # written by up.sh
. "$STATE"

alive() {
  [ -n "$1" ] && [ -r "/proc/$1/comm" ] || return 1
  case $(cat "/proc/$1/comm" 2>/dev/null) in "$2"*) ;; *) return 1 ;; esac
  case $(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) in Z|X|'') return 1 ;; esac
}

if alive "$SLURMCTLD_PID" slurmctld; then
  export SLURM_CONF="$DIR/slurm.conf"
  jobs=$(squeue -h -o '%A' 2>/dev/null | tr '\n' ' ')
  if [ -n "${jobs% }" ]; then
    # shellcheck disable=SC2086  # a list of job ids
    scancel $jobs 2>/dev/null
    n=0
    while [ -n "$(squeue -h -o '%A' 2>/dev/null)" ] && [ $n -lt 30 ]; do sleep 0.2; n=$((n + 1)); done
  fi
fi

# stop NAME PID: SIGTERM, up to 15 s to exit (slurmctld saves its state), then SIGKILL.
rc=0
stop() {
  alive "$2" "$1" || return 0
  kill -TERM "$2" 2>/dev/null
  n=0
  while alive "$2" "$1" && [ $n -lt 150 ]; do sleep 0.1; n=$((n + 1)); done
  if alive "$2" "$1"; then
    kill -KILL "$2" 2>/dev/null
    sleep 0.5
    alive "$2" "$1" && { echo "slurm down: $1 (pid $2) would not die" >&2; rc=1; }
  fi
  return 0
}
stop slurmd "$SLURMD_PID"
stop slurmctld "$SLURMCTLD_PID"
stop munged "$MUNGED_PID"
[ $rc = 0 ] && : > "$STATE"
exit $rc
