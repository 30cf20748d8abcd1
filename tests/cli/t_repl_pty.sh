# CLI tests for `vmxsim repl` on a terminal: Tab completion, history (recall and the
# $HOME/.vmxsim_history file), Enter repeating a step, Ctrl-C at the prompt and during `continue`.
# A small python3 helper drives the REPL through a pseudo-terminal with keystrokes; without
# python3 or a pty the test prints why and skips.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

if ! command -v python3 >/dev/null 2>&1; then
  skip "python3 not found, needed to drive a pseudo-terminal"
  return 0
fi

"$VMXSIM" trace asm "$ROOT/tests/cli/repl/repl.txt" -o repl.bin
# long.bin: 2000 events, half of them touching 100000 pages each: `continue` runs for many seconds.
{ echo "run 10"; i=0; while [ $i -lt 1000 ]; do echo "touch 0x400000 100000 w"; echo "cr3w 0x$((i % 7 + 1))000"; i=$((i + 1)); done; } > long.txt
"$VMXSIM" trace asm long.txt -o long.bin
mkdir home

cat > pty_driver.py <<'EOF'
# Drives `vmxsim repl` through a pty; prints "ok NAME", "FAIL NAME<TAB>detail" or "SKIP reason".
import os, pty, re, select, sys, time

prog, home = sys.argv[1], sys.argv[2]
env = dict(os.environ, HOME=home, TERM="xterm", INPUTRC="/dev/null")

class Session:
    def __init__(self, trace):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execve(prog, [prog, "repl", trace], env)
        self.buf = b""

    def expect(self, pat, timeout=10):
        """Reads until pat appears; returns what came before it (escape codes removed)."""
        deadline = time.time() + timeout
        while pat not in self.buf:
            left = deadline - time.time()
            r = select.select([self.fd], [], [], max(left, 0))[0] if left > 0 else []
            if not r:
                raise TimeoutError("waited for %r; got %r" % (pat, clean(self.buf[-300:])))
            try:
                data = os.read(self.fd, 4096)
            except OSError:
                data = b""
            if not data:
                raise EOFError("end of output while waiting for %r; got %r" % (pat, clean(self.buf[-300:])))
            self.buf += data
        i = self.buf.index(pat) + len(pat)
        seen, self.buf = self.buf[:i], self.buf[i:]
        return clean(seen)

    def send(self, keys):
        os.write(self.fd, keys)

    def wait(self, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status
            try:
                os.read(self.fd, 4096)
            except OSError:
                pass
            time.sleep(0.05)
        raise TimeoutError("the REPL did not exit")

def clean(b):
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\r", "", b.decode("utf-8", "replace"))

def check(name, fn):
    try:
        fn()
        print("ok " + name)
    except Exception as e:
        print("FAIL %s\t%s" % (name, e))

def must(cond, why):
    if not cond:
        raise AssertionError(why)

try:
    s = Session("repl.bin")
except OSError as e:
    print("SKIP no pseudo-terminal: %s" % e)
    sys.exit(0)

PROMPT = b"vmxsim> "
check("banner and prompt", lambda: must("Type 'help'" in s.expect(PROMPT), "no banner"))

def complete_command():
    s.send(b"inf\t")
    s.expect(b"info ")
    s.send(b"regs\r")
    must("debug registers in hardware" in s.expect(PROMPT), "info regs did not run")
check("Tab completes 'inf' to 'info'", complete_command)

def complete_reason():
    s.send(b"break exit CR_A\t")
    s.expect(b"CR_ACCESS ")
    s.send(b"\r")
    must("breakpoint 1: exit CR_ACCESS" in s.expect(PROMPT), "breakpoint not set")
check("Tab completes exit-reason names", complete_reason)

def complete_field():
    s.send(b"info vmcs guest_cr4\t")
    s.expect(b"GUEST_CR4 ")
    s.send(b"\r")
    must("0x6804" in s.expect(PROMPT), "field not shown")
check("Tab completes VMCS field names, ignoring case", complete_field)

def ctrl_c_at_prompt():
    s.send(b"policy shadowcache+laz\t")
    s.expect(b"lazydr ")
    s.send(b"\x03")              # drops the line: the policy command must not run
    s.expect(PROMPT)             # a fresh prompt (the tty flushes input queued before it)
    s.send(b"help\r")
    out = s.expect(b"Enter on an empty line")
    out += s.expect(PROMPT)
    must("restarted" not in out and "Unknown command" not in out, "the line was not dropped: %r" % out)
check("Tab completes policy presets after '+'; Ctrl-C at the prompt clears the line", ctrl_c_at_prompt)

def history_recall():
    s.send(b"\x1b[A\x1b[A\x1b[A\r")   # help, info vmcs GUEST_CR4, break exit CR_ACCESS
    must("breakpoint 2: exit CR_ACCESS" in s.expect(PROMPT), "up-arrow did not recall the break command")
check("up-arrow recalls earlier commands", history_recall)

def enter_repeats():
    s.send(b"step\r")
    must("event 0 vcpu 0:" in s.expect(PROMPT), "step did not run")
    s.send(b"\r")
    must("event 1 vcpu 0:" in s.expect(PROMPT), "Enter did not repeat the step")
check("Enter on an empty line repeats step", enter_repeats)

def history_lists():
    s.send(b"history 3\r")
    out = s.expect(PROMPT)
    must(re.search(r"\d+  step\n\s*\d+  step\n\s*\d+  history 3", out) or
         re.search(r"\d+  step\n\s*\d+  history 3", out), "history did not list the last commands: %r" % out)
check("history lists the last commands", history_lists)

def quit_and_history():
    s.send(b"quit\r")
    must(s.wait() == 0, "exit status not 0")
    hist = open(os.path.join(home, ".vmxsim_history")).read()
    for line in ("info regs", "break exit CR_ACCESS", "step"):
        must(line in hist, "%r missing from the history file: %r" % (line, hist))
check("history is written to $HOME/.vmxsim_history", quit_and_history)

def interrupt_continue():
    t = Session("long.bin")
    t.expect(PROMPT)
    t.send(b"continue\r")
    time.sleep(0.5)
    t.send(b"\x03")
    out = t.expect(PROMPT, timeout=60)
    m = re.search(r"interrupted after event (\d+)\n.*?event (\d+) vcpu", out, re.S)
    must(m, "continue was not interrupted: %r" % out)
    must(m.group(1) == m.group(2), "the interruption and the stop line name different events: %r" % out)
    must("end of trace" not in out, "continue ran to the end: %r" % out)
    t.send(b"quit\r")
    must(t.wait() == 0, "exit status not 0")
check("Ctrl-C interrupts a long continue, names the last event as the stop line does", interrupt_continue)
EOF

python3 pty_driver.py "$VMXSIM" "$T/home" > pty.out 2>&1
while IFS= read -r line; do
  case "$line" in
    "ok "*) pass "${line#ok }" ;;
    "FAIL "*) l=${line#FAIL }; fail "${l%%	*}" "${l#*	}" ;;
    "SKIP "*) skip "${line#SKIP }" ;;
    *) fail "pty driver output" "$line" ;;
  esac
done < pty.out
