# The README's examples work when pasted top to bottom: every ```sh block, in order, run as one
# shell script (set -e) in a fresh directory laid out as the top of a clone (./vmxsim, traces/,
# scripts/, tests/ as links), so a command that needs an earlier one's output finds it and a
# file the README names must exist.  `make` lines are not run (this is make check), nor is
# anything else the README does not show.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

mkdir readme && cd readme || fail "a directory for the README's commands"
ln -s "$VMXSIM" vmxsim
for d in traces scripts tests docs; do ln -s "$ROOT/$d" "$d"; done
awk '/^```sh$/ { on = 1; next } /^```/ { on = 0; next } on && !/^make / { print }' "$ROOT/README.md" > readme.sh
check_eq "the README has shell examples" "yes" "$([ "$(wc -l < readme.sh)" -gt 20 ] && echo yes)"
run env HOME="$PWD" XDG_CACHE_HOME="$PWD/cache" sh -e readme.sh
check_rc "the README's commands, pasted in order, all succeed" 0
if [ "$rc" != 0 ]; then
  printf '%s\n' "$err" | tail -5 >&2
fi
check_eq "the charts it draws are there" "exits.caption.txt exits.pdf exits.png exits.svg sweep.caption.txt sweep.pdf sweep.png sweep.svg" \
  "$(ls exits.* sweep.* 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
check_eq "the Slurm scripts it writes are there" "merge.sbatch sweep.sbatch" "$(ls slurm-job 2>/dev/null | grep sbatch | tr '\n' ' ' | sed 's/ $//')"
check_eq "the sweep stored its 9 runs" "9" "$(sqlite3 study.db 'SELECT count(*) FROM runs' 2>/dev/null)"
# every file the README names exists
for f in $(grep -o '`[a-zA-Z][a-zA-Z0-9_./-]*\.\(md\|bin\|txt\|gz\|json\|sh\|1\)`' "$ROOT/README.md" | tr -d '`' | sort -u); do
  case $f in
    lat_ctx.bin|basic.bin|pipe.bin|myhost.json|study.json|session.txt|cr3cache.json) ;;   # the examples' own outputs
    *) [ -e "$ROOT/$f" ] && pass "README names $f, which exists" || fail "README names $f, which exists" "missing: $f" ;;
  esac
done
cd ..
