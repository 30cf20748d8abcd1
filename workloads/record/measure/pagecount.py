#!/usr/bin/env python3
"""Distinct user pages per pass, from valgrind lackey memory traces of ring.c.

usage: pagecount.py [--warmup W] [--list] MARKER TRACE...

MARKER is the address ring prints ("ring: marker 0x..."); each TRACE is the log of one
process, written by `valgrind --tool=lackey --trace-mem=yes --log-file=PREFIX.%p`. Lackey
writes one line per access: "I  ADDR,SIZE" for an instruction fetch, " L", " S" or " M" for
a data load, store or modify. A load of the marker starts a pass, so a pass runs from the
top of ring's loop to the top of the next one: the token's read() returning, the buffer
sum, the write() to the next process, and the read() that blocks. The marker load itself
is not counted; nothing else uses its page.

Per process it prints the passes it found and the distinct 4 KB pages (instruction and data
pages together; an access that crosses a page boundary counts both) of its steady passes:
all but the first W (default 2: lazy binding of library calls, first touches). The pass
that ends in exit() is never closed by a marker and is not counted. The last line sums up
over all processes:
  user pages per pass: N        (or "N-M" when steady passes differ)
Exit code 1 when no trace has a steady pass.
"""
import argparse
import re
import sys

PAGE_SHIFT = 12
ACCESS = re.compile(r'^\s*([ILSM])\s+([0-9a-fA-F]+),(\d+)')


def passes_of(path, marker):
    """The passes of one trace: a list of dicts page -> set of access kinds ('I', 'D')."""
    passes, cur = [], None
    with open(path, errors='replace') as f:
        for line in f:
            m = ACCESS.match(line)
            if not m:
                continue                    # valgrind's own messages ("==PID== ...")
            kind, addr, size = m.group(1), int(m.group(2), 16), int(m.group(3))
            if kind == 'L' and addr == marker:
                if cur is not None:
                    passes.append(cur)
                cur = {}
                continue
            if cur is None:
                continue                    # start-up, before the first pass
            k = 'I' if kind == 'I' else 'D'
            for page in {addr >> PAGE_SHIFT, (addr + max(size, 1) - 1) >> PAGE_SHIFT}:
                cur.setdefault(page, set()).add(k)
    # the pass still open when the trace ends contains the exit: not counted
    return passes


def describe(p):
    ipages = sum(1 for kinds in p.values() if 'I' in kinds)
    dpages = sum(1 for kinds in p.values() if 'D' in kinds)
    return '%d pages (%d instruction, %d data)' % (len(p), ipages, dpages)


def main():
    ap = argparse.ArgumentParser(description='Distinct user pages per pass of ring.c '
                                 'from valgrind lackey traces.')
    ap.add_argument('--warmup', type=int, default=2, help='passes to leave out at the start')
    ap.add_argument('--list', action='store_true', help='list the pages of each steady pass')
    ap.add_argument('marker', help="the address ring printed ('ring: marker 0x...')")
    ap.add_argument('traces', nargs='+', help='lackey logs, one per process')
    a = ap.parse_args()
    try:
        marker = int(a.marker, 16)
    except ValueError:
        sys.exit("pagecount: marker '%s' is not a hexadecimal address" % a.marker)

    counts = []
    for path in a.traces:
        try:
            passes = passes_of(path, marker)
        except OSError as e:
            sys.exit('pagecount: %s: %s' % (path, e.strerror))
        steady = passes[a.warmup:]
        if not steady:
            print('%s: %d passes, none steady (more passes needed, or not a ring trace)'
                  % (path, len(passes)))
            continue
        sizes = sorted({len(p) for p in steady})
        print('%s: %d passes; steady passes %d..%d: %s' % (
            path, len(passes), a.warmup + 1, a.warmup + len(steady),
            ', '.join(describe(p) for p in steady[:1]) if len(sizes) == 1
            else 'from %d to %d pages' % (sizes[0], sizes[-1])))
        if a.list:
            for i, p in enumerate(steady, a.warmup + 1):
                print('  pass %d: %s' % (i, ' '.join(
                    '%x%s' % (pg << PAGE_SHIFT, '' if k == {'D'} else ('i' if k == {'I'} else 'id'))
                    for pg, k in sorted(p.items()))))
        counts.extend(len(p) for p in steady)
    if not counts:
        print('user pages per pass: none measured')
        return 1
    lo, hi = min(counts), max(counts)
    print('user pages per pass: %s' % (lo if lo == hi else '%d-%d' % (lo, hi)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
