#!/usr/bin/env python3
"""How hackbench (perf bench sched messaging) is scheduled, from system-wide perf recordings.

usage: sched_analyze.py [--comm NAME] [--bytes N] RECORDING...

Each RECORDING is the text of `perf script -F comm,pid,tid,cpu,time,event,trace` (gzip'd
or not) of a recording made with
  perf record -a -e sched:sched_switch -e sched:sched_wakeup -e sched:sched_process_fork \\
      -e raw_syscalls:sys_exit --filter '(id == 0 || id == 1) && ret == 100' -- \\
      perf bench sched messaging -g 1 [-p] -l LOOPS
as messaging.sh beside this file makes them. The numbers are pooled over all recordings.

Definitions (x86-64 system-call numbers: read 0, write 1):
- workload: the tasks named NAME (default sched-messaging); its senders write messages of
  N bytes (default 100, perf bench's DATASIZE), its receivers read them, the parent (W)
  does neither. Everything else is another program.
- phase: from the first to the last message read or write; only it is counted.
- message: a receiver's read() returning N bytes.
- context switch: a sched_switch, or a switch inferred when a task emits an event on a CPU
  where another task was last switched in (some machines miss tracepoints in an idle
  CPU's context; the same rule as `vmxsim import perf-script`).
- CR3 switch: a CPU starts running a user task of another process than the last user task
  it ran; idle and kernel threads keep the previous address space (lazy TLB), threads of
  one process share it. The first process a CPU runs in the phase counts as loaded.
- address-space sequence: per CPU, the workload processes in the order their CR3 switches
  load them, other programs left out and repeats merged; roles S (sender), R (receiver),
  W (parent). Transitions, sender resumption and the caches are computed on it.
- sender run: from a sender's switch-in to its switch-out; a sender switch-out is
  preempted when its prev_state is R (exits left out); receiver wake-up: the reads between
  two switch-outs of a receiver in which it stopped running of its own accord (any state
  but R: asleep, or exiting after its last message).
- message-weighted median: the size of the batch that the median message belongs to.
- LRU-k: a cache of k address spaces (the current one included); a CR3 switch to X hits
  when fewer than k distinct address spaces ran since X. RR4: 4 entries filled
  round-robin on a miss, a hit changes nothing, the first address space in entry 0.
Exit codes: 0 ok, 1 unreadable or malformed input, or no messages found, 2 usage.
"""
import argparse
import collections
import gzip
import re
import sys

# "COMM PID/TID [CPU] SECS.FRAC: EVENT: fields"; the command may contain spaces.
LINE = re.compile(r'^\s*(.*?)\s+(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+(\d+\.\d+):\s+(\S+):\s*(.*)$')
SYS_EXIT = re.compile(r'NR (\d+) = (-?\d+)')
NR_READ, NR_WRITE = 0, 1

# Kernel threads by name: the list of workloads/record/README.md (the importer's).
KTHREAD_PREFIXES = (
    'kworker/', 'ksoftirqd/', 'migration/', 'rcu_', 'rcuc/', 'rcuo', 'cpuhp/', 'idle_inject/',
    'watchdog/', 'irq/', 'kthreadd', 'kswapd', 'kcompactd', 'khugepaged', 'ksmd', 'kauditd',
    'khungtaskd', 'oom_reaper', 'kblockd', 'kdevtmpfs', 'kintegrityd', 'writeback', 'jbd2/',
    'kthrotld', 'scsi_eh_', 'scsi_tmf_', 'xfsaild/', 'swapper', 'pool_workqueue_', 'psimon',
    'ext4-rsv-conver', 'kvm-pit/', 'kvm-nx-lpage')


class BadInput(Exception):
    pass


def field(rest, key, where):
    m = re.search(r'(?:^|\s)' + key + r'=(\S+)', rest)
    if not m:
        raise BadInput('%s: no %s= field' % (where, key))
    return m.group(1)


def read_events(path):
    """(time, cpu, tgid, tid, comm, event, fields, 'FILE:LINE') of every event line, by time."""
    opener = gzip.open if path.endswith('.gz') else open
    events = []
    try:
        with opener(path, 'rt', errors='replace') as f:
            for n, line in enumerate(f, 1):
                if line.startswith('#') or not line.strip():
                    continue
                m = LINE.match(line)
                if not m:
                    raise BadInput('%s:%d: not a perf script event line: %r'
                                   % (path, n, line.rstrip()[:80]))
                comm, tgid, tid, cpu, t, ev, rest = m.groups()
                events.append((float(t), int(cpu), int(tgid), int(tid), comm, ev, rest,
                               '%s:%d' % (path, n)))
    except (OSError, EOFError) as e:
        raise BadInput('%s: %s' % (path, getattr(e, 'strerror', None) or e))
    events.sort(key=lambda e: e[0])          # stable: equal times keep the file's order
    return events


class Batches:
    """Batch sizes (messages per sender run or per receiver wake-up)."""

    def __init__(self):
        self.sizes = collections.Counter()

    def add(self, size):
        self.sizes[size] += 1

    def describe(self):
        runs = sum(self.sizes.values())
        msgs = sum(k * v for k, v in self.sizes.items())
        if not runs:
            return 'none'
        median, cum = 0, 0
        for k in sorted(self.sizes):
            cum += k * self.sizes[k]
            if msgs and cum * 2 >= msgs:
                median = k
                break
        return 'mean %.1f, message-weighted median %d (%d)' % (msgs / runs, median, runs)


class Totals:
    """Counts pooled over the recordings."""

    def __init__(self):
        self.c = collections.Counter()
        self.transitions = collections.Counter()
        self.between = collections.Counter()     # receivers between two sender runs
        self.sender_runs = Batches()
        self.receiver_wakeups = Batches()
        self.lru_hits = collections.Counter()


class Recording:
    """One recording: who is who, then a walk through its events in time order."""

    def __init__(self, events, comm, nbytes):
        self.events, self.comm, self.nbytes = events, comm, nbytes
        self.tgid, self.kthreads = {}, {0, 2}
        self.reads, self.writes = collections.Counter(), collections.Counter()
        self.work = set()
        self.t0 = self.t1 = None
        self.classify()

    def message_io(self, ev, rest, where):
        """'r' or 'w' for a sys_exit of a message read or write, else None."""
        if ev != 'raw_syscalls:sys_exit':
            return None
        m = SYS_EXIT.search(rest)
        if not m:
            raise BadInput('%s: sys_exit without "NR n = ret"' % where)
        nr, ret = int(m.group(1)), int(m.group(2))
        if ret != self.nbytes:
            return None
        return {NR_READ: 'r', NR_WRITE: 'w'}.get(nr)

    def classify(self):
        for t, cpu, tgid, tid, comm, ev, rest, where in self.events:
            self.tgid[tid] = tgid
            if comm == self.comm:
                self.work.add(tid)
            if ev == 'sched:sched_process_fork':
                child = int(field(rest, 'child_pid', where))
                if tid in self.kthreads:
                    self.kthreads.add(child)
            elif ev == 'sched:sched_switch':
                m = re.search(r'next_comm=(.*) next_pid=(\d+)', rest)
                if not m:
                    raise BadInput('%s: sched_switch without next_comm= and next_pid=' % where)
                if m.group(1) == self.comm:
                    self.work.add(int(m.group(2)))
        for t, cpu, tgid, tid, comm, ev, rest, where in self.events:
            io = self.message_io(ev, rest, where) if tid in self.work else None
            if io:
                (self.reads if io == 'r' else self.writes)[tid] += 1
                self.t0 = t if self.t0 is None else self.t0
                self.t1 = t

    def role(self, tid):
        if tid not in self.work:
            return 'x'
        if self.reads[tid] and self.writes[tid]:
            return 'P'                       # both: a ping-pong, not hackbench
        return 'R' if self.reads[tid] else 'S' if self.writes[tid] else 'W'

    def is_kthread(self, tid, comm):
        return tid in self.kthreads or comm.startswith('[') or comm.startswith(KTHREAD_PREFIXES)

    def walk(self, tot):
        """Adds the phase's counts, batches and address-space sequences to `tot`."""
        w = Walk(self, tot)
        for e in self.events:
            w.event(*e)
        c = tot.c
        c['phase_us'] += (self.t1 - self.t0) * 1e6
        c['senders'] += sum(1 for t in self.work if self.role(t) == 'S')
        c['receivers'] += sum(1 for t in self.work if self.role(t) == 'R')
        for s in w.seq.values():
            replay(s, tot)


class Walk:
    """The state of each CPU while a recording's events go by in time order."""

    def __init__(self, rec, tot):
        self.rec, self.tot, self.c = rec, tot, tot.c
        self.running, self.loaded = {}, {}   # per CPU: tid running, tgid of the loaded mm
        self.seq = collections.defaultdict(list)  # per CPU: [(tgid, role)], workload only
        self.sent, self.read = collections.Counter(), collections.Counter()
        self.in_phase = False

    def event(self, t, cpu, tgid, tid, comm, ev, rest, where):
        rec, c = self.rec, self.c
        self.in_phase = rec.t0 <= t <= rec.t1
        if cpu not in self.running:
            self.running[cpu] = tid          # the first task seen on this CPU
            self.load(cpu, tid, comm)
        elif tid != 0 and self.running[cpu] != tid:
            # this task runs here, but its switch-in was not recorded
            self.switch(cpu, self.running[cpu], None, tid, comm)
            c['inferred'] += self.in_phase
        if ev == 'sched:sched_switch':
            m = re.search(r'next_comm=(.*) next_pid=(\d+)', rest)
            self.switch(cpu, int(field(rest, 'prev_pid', where)),
                        field(rest, 'prev_state', where), int(m.group(2)), m.group(1))
        elif ev == 'sched:sched_wakeup':
            if self.in_phase and rec.role(int(field(rest, 'pid', where))) == 'R':
                c['receiver_wakeups'] += 1
        elif tid in rec.work:
            io = rec.message_io(ev, rest, where)
            if io == 'w':
                self.sent[tid] += 1
            elif io == 'r' and self.in_phase:
                self.read[tid] += 1
                c['messages'] += 1

    def switch(self, cpu, prev, state, nxt, comm):
        """`prev` leaves `cpu` in `state` (None: not recorded), `nxt` starts running."""
        if self.in_phase:
            self.c['switches'] += 1
            self.c['switches_work'] += prev in self.rec.work or nxt in self.rec.work
            self.end_run(prev, state)
        self.sent[prev] = 0
        self.running[cpu] = nxt
        self.sent[nxt] = 0
        self.load(cpu, nxt, comm)

    def end_run(self, tid, state):
        """A sender's run ends at every switch-out, a receiver's batch when it stops."""
        role = self.rec.role(tid)
        if role == 'S':
            self.tot.sender_runs.add(self.sent[tid])
            if state is not None and state[0] not in 'XZ':   # exits left out
                self.c['sender_out'] += 1
                self.c['sender_preempted'] += state.startswith('R')
        elif role == 'R' and state is not None and not state.startswith('R'):
            self.tot.receiver_wakeups.add(self.read[tid])
            self.read[tid] = 0

    def load(self, cpu, tid, comm):
        """The address space after `tid` starts running on `cpu`."""
        rec = self.rec
        if tid == 0 or rec.is_kthread(tid, comm):
            return                           # lazy TLB: the address space stays
        g, prev = rec.tgid.get(tid, tid), self.loaded.get(cpu)
        if prev == g:
            return
        self.loaded[cpu] = g
        if not self.in_phase:
            return
        s = self.seq[cpu]
        if not s and prev in rec.work:
            s.append((prev, rec.role(prev)))     # loaded when the phase began
        self.c['cr3_any'] += prev is not None
        if tid in rec.work and (not s or s[-1][0] != g):
            s.append((g, rec.role(tid)))


def replay(s, tot):
    """One CPU's address-space sequence: transitions, sender resumption, CR3 caches."""
    c = tot.c
    for (a, ra), (b, rb) in zip(s, s[1:]):
        tot.transitions[ra + '>' + rb] += 1
    # sender, one or more receivers, sender: how many receivers, and the same sender again?
    last_sender, receivers = None, 0
    for g, r in s:
        if r == 'S':
            if last_sender is not None and receivers:
                tot.between[min(receivers, 3)] += 1
                c['same_sender'] += g == last_sender
            last_sender, receivers = g, 0
        elif r == 'R' and last_sender is not None:
            receivers += 1
        else:
            last_sender = None               # the parent ran: not a sender-receiver pattern
    lru = [s[0][0]] if s else []             # most recent first
    rr4, nxt = ([s[0][0], None, None, None], 1) if s else ([], 0)
    for g, r in s[1:]:
        c['cr3_work'] += 1
        d = lru.index(g) if g in lru else None
        for k in range(1, 9):
            tot.lru_hits[k] += d is not None and d < k
        if d is not None:
            lru.remove(g)
        lru.insert(0, g)
        if g in rr4:
            c['rr4_hits'] += 1
        else:
            rr4[nxt % 4] = g
            nxt += 1


def pct(part, whole):
    return '%.1f%%' % (100.0 * part / whole) if whole else '-'


def report(tot, n, comm, nbytes):
    c = tot.c
    msgs = c['messages']
    per = lambda x: '%.4f' % (x / msgs)
    print('recordings: %d; messages: %d (%d-byte reads of %s); %d senders, %d receivers; '
          '%.2f us per message' % (n, msgs, nbytes, comm, c['senders'], c['receivers'],
                                   c['phase_us'] / msgs))
    print('context switches per message: %s (%s with a workload task; %d inferred)'
          % (per(c['switches']), per(c['switches_work']), c['inferred']))
    print('CR3 switches per message: %s between workload processes (%s counting other programs)'
          % (per(c['cr3_work']), per(c['cr3_any'])))
    nt = sum(tot.transitions.values())
    main = ['S>R', 'R>S', 'R>R', 'S>S']
    other = nt - sum(tot.transitions[k] for k in main)
    print('transitions: ' + ' '.join('%s %s' % (k, pct(tot.transitions[k], nt)) for k in main)
          + ' other %s (%d)' % (pct(other, nt), nt))
    nb = sum(tot.between.values())
    print('receivers between two sender runs: 1: %s 2: %s 3+: %s (%d)'
          % (pct(tot.between[1], nb), pct(tot.between[2], nb), pct(tot.between[3], nb), nb))
    print('same sender resumes: %s' % pct(c['same_sender'], nb))
    print('sender switch-outs preempted: %s (%d)' % (pct(c['sender_preempted'], c['sender_out']),
                                                     c['sender_out']))
    print('messages per sender run: %s' % tot.sender_runs.describe())
    print('messages per receiver wake-up: %s; receiver wake-ups per message %s'
          % (tot.receiver_wakeups.describe(), per(c['receiver_wakeups'])))
    w = c['cr3_work']
    print('CR3 cache hit rate: RR4 %s; LRU %s (%d)' % (
        '%.3f' % (c['rr4_hits'] / w) if w else '-',
        ' '.join('k=%d %s' % (k, '%.3f' % (tot.lru_hits[k] / w) if w else '-')
                 for k in range(2, 9)), w))


def main():
    ap = argparse.ArgumentParser(
        description='Scheduling of perf bench sched messaging from perf script text.')
    ap.add_argument('--comm', default='sched-messaging', help='the workload tasks\' name')
    ap.add_argument('--bytes', type=int, default=100, help='message size')
    ap.add_argument('recordings', nargs='+')
    a = ap.parse_args()
    tot = Totals()
    try:
        for path in a.recordings:
            rec = Recording(read_events(path), a.comm, a.bytes)
            if rec.t0 is None:
                raise BadInput('%s: no %d-byte read or write of a task named %s (record with '
                               'messaging.sh: raw_syscalls:sys_exit is needed)'
                               % (path, a.bytes, a.comm))
            rec.walk(tot)
    except BadInput as e:
        print('sched_analyze: %s' % e, file=sys.stderr)
        return 1
    report(tot, len(a.recordings), a.comm, a.bytes)
    return 0


if __name__ == '__main__':
    sys.exit(main())
