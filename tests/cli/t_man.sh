# The man page (docs/vmxsim.1) is complete: every option of every command's --help, every
# REPL command, the sections a man page has (ENVIRONMENT, FILES, SEE ALSO); and it renders
# without warnings.

MAN="$ROOT/docs/vmxsim.1"
# in_man OPTION: the option as the man page spells it (\- for each hyphen)
in_man() { grep -qF -- "$(printf '%s' "$1" | sed 's/-/\\-/g')" "$MAN"; }

for cmd in run "trace asm" "trace dump" "trace info" policies cpus runs report compare repl import \
           "import perf-script" "import kvm-ftrace" "import xentrace" "import trace-cmd" regress reproduce \
           summary calibrate migrate; do
  # shellcheck disable=SC2086
  opts=$("$VMXSIM" $cmd --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
  for o in $opts; do
    if in_man "$o"; then pass "man page: $cmd $o"; else fail "man page documents '$cmd $o'" "not in docs/vmxsim.1"; fi
  done
done
for c in $(printf 'help\n' | "$VMXSIM" repl "$ROOT/traces/lat_ctx-2p.bin" | sed -n 's/^  \([a-z-]*\) .*/\1/p'); do
  m=$(printf '%s' "$c" | sed 's/-/\\\\-/g')          # next-exit -> next\\-exit: a literal \- in the regex
  if grep -q "^\.BR $m \|^\.B $m\$" "$MAN"; then pass "man page: REPL command $c"
  else fail "man page documents the REPL command '$c'" "no .B/.BR line for it under REPL COMMANDS"; fi
done
for section in SYNOPSIS DESCRIPTION COMMANDS "REPL COMMANDS" "EXIT STATUS" ENVIRONMENT FILES "SEE ALSO"; do
  if grep -q "^\.SH \"*$section\"*$" "$MAN"; then pass "man page: section $section"
  else fail "man page has a $section section" "no '.SH $section'"; fi
done
for v in VMXSIM_DATADIR TMPDIR HOME; do
  check_contains "ENVIRONMENT names $v" "$(sed -n '/^\.SH ENVIRONMENT/,/^\.SH FILES/p' "$MAN")" "$v"
done
if command -v groff >/dev/null 2>&1; then
  run groff -man -Tutf8 -ww -z "$MAN"
  check_eq "the man page renders without warnings" "" "$err"
else
  skip "groff not found: the rendering is not checked"
fi
