#!/usr/bin/env python3
"""Lists the objects a Linux kernel build compiles for a configuration, from the kbuild
Makefiles alone: what `make vmlinux` builds, directory by directory, as kbuild descends.

usage: kbuild_objects.py --config CONFIG [--var NAME=VALUE]... [--per-dir] [--list]
                         TREE DIR...

CONFIG is a .config (CONFIG_X=y lines) or a file of option names, one a line (those are y).
TREE is the kernel tree (only its Makefiles and Kbuild files are read); DIR... are the
directories the top-level Makefile descends into (core-y, init-y, drivers-y, net-y,
libs-y and the architecture's), relative to TREE; "." reads TREE's own Kbuild file.
--var sets a make variable the Makefiles use (BITS=32, SRCARCH=x86, ...).

In each directory it reads Kbuild (or Makefile), evaluates assignments, ifeq/ifneq/ifdef/
ifndef blocks and the usual functions with the configuration's values, and takes obj-y,
lib-y and the .o files of extra-y; an entry ending in '/' is a subdirectory to descend
into, and an object with FOO-y or FOO-objs parts counts as those parts (each one a
compiler run). Rules and recipes are skipped; an unknown function expands to nothing and
is reported on standard error. Output: the total, and with --per-dir the count of each
directory, with --list every object (path relative to TREE).

What it cannot see: objects built by a directory's own rules rather than by obj-y (the
vDSO's parts, generated sources) and objects of host programs; docs/experiments.md
("xenner-kbuild-2008") gives the error this makes on a real build.
"""
import argparse
import os
import re
import sys


def read_config(path):
    vals = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            m = re.match(r'^(CONFIG_\w+)=(.*)$', line)
            if m:
                vals[m.group(1)] = m.group(2).strip('"')
            elif re.match(r'^\w+$', line):
                vals[line if line.startswith('CONFIG_') else 'CONFIG_' + line] = 'y'
    return vals


def split_args(s):
    """Splits a function's arguments at top-level commas."""
    out, depth, cur = [], 0, ''
    for ch in s:
        if ch == ',' and depth == 0:
            out.append(cur)
            cur = ''
            continue
        if ch in '({':
            depth += 1
        elif ch in ')}':
            depth -= 1
        cur += ch
    out.append(cur)
    return out


def pattern_match(pat, word):
    if '%' not in pat:
        return word == pat, ''
    a, b = pat.split('%', 1)
    if word.startswith(a) and word.endswith(b) and len(word) >= len(a) + len(b):
        return True, word[len(a):len(word) - len(b)]
    return False, ''


class Make:
    def __init__(self, variables, warn):
        self.v = dict(variables)
        self.warn = warn

    def expand(self, s, depth=0):
        if depth > 50:
            return ''
        out, i = '', 0
        while i < len(s):
            if s[i] != '$':
                out += s[i]
                i += 1
                continue
            if i + 1 >= len(s):
                break
            c = s[i + 1]
            if c == '$':
                out += '$'
                i += 2
                continue
            if c not in '({':
                out += self.get(c, depth)
                i += 2
                continue
            close = ')' if c == '(' else '}'
            j, d = i + 2, 1
            while j < len(s) and d:
                if s[j] in '({':
                    d += 1
                elif s[j] in ')}':
                    d -= 1
                j += 1
            inner = s[i + 2:j - 1]
            out += self.reference(inner, depth)
            i = j
            del close
        return out

    def get(self, name, depth):
        return self.expand(self.v.get(name, ''), depth + 1)

    def reference(self, inner, depth):
        m = re.match(r'^([a-z-]+)\s+(.*)$', inner, re.S)
        if not m or m.group(1) not in FUNCTIONS:
            name = self.expand(inner, depth + 1)
            sub = re.match(r'^([^:]+):([^=]*)=(.*)$', name)       # $(VAR:a=b)
            if sub:
                words = self.get(sub.group(1), depth).split()
                a, b = sub.group(2), sub.group(3)
                if '%' not in a:
                    a, b = '%' + a, '%' + b
                out = []
                for w in words:
                    ok, stem = pattern_match(a, w)
                    out.append(b.replace('%', stem, 1) if ok else w)
                return ' '.join(out)
            return self.get(name, depth)
        return FUNCTIONS[m.group(1)](self, split_args(m.group(2)), depth)


def f_subst(mk, a, d):
    x, y, text = (mk.expand(t, d + 1) for t in (a + ['', '', ''])[:3])
    return text.replace(x, y) if x else text


def f_patsubst(mk, a, d):
    pat, rep, text = (mk.expand(t, d + 1).strip() for t in (a + ['', '', ''])[:3])
    out = []
    for w in text.split():
        ok, stem = pattern_match(pat, w)
        out.append(rep.replace('%', stem, 1) if ok else w)
    return ' '.join(out)


def f_filter(mk, a, d, keep=True):
    pats = mk.expand(a[0], d + 1).split()
    words = mk.expand(','.join(a[1:]), d + 1).split()
    return ' '.join(w for w in words if any(pattern_match(p, w)[0] for p in pats) == keep)


def f_if(mk, a, d):
    cond = mk.expand(a[0], d + 1).strip()
    if cond:
        return mk.expand(a[1], d + 1) if len(a) > 1 else ''
    return mk.expand(','.join(a[2:]), d + 1) if len(a) > 2 else ''


def f_and(mk, a, d):
    last = ''
    for t in a:
        last = mk.expand(t, d + 1).strip()
        if not last:
            return ''
    return last


def f_or(mk, a, d):
    for t in a:
        x = mk.expand(t, d + 1).strip()
        if x:
            return x
    return ''


def f_words(fn):
    return lambda mk, a, d: fn(mk.expand(','.join(a), d + 1).split())


def f_fix(fn):
    return lambda mk, a, d: ' '.join(fn(mk.expand(a[0], d + 1).strip(), w)
                                     for w in mk.expand(','.join(a[1:]), d + 1).split())


def f_findstring(mk, a, d):
    x, text = (mk.expand(t, d + 1) for t in (a + ['', ''])[:2])
    return x if x in text else ''


def f_nothing(name):
    def f(mk, a, d):
        if name not in ('shell', 'info', 'warning', 'error', 'call', 'cc-option', 'wildcard'):
            mk.warn('function $(%s ...) not evaluated' % name)
        return ''
    return f


def f_foreach(mk, a, d):
    if len(a) < 3:
        return ''
    var = mk.expand(a[0], d + 1).strip()
    saved, out = mk.v.get(var), []
    for w in mk.expand(a[1], d + 1).split():
        mk.v[var] = w.replace('$', '$$')
        out.append(mk.expand(','.join(a[2:]), d + 1))
    if saved is None:
        mk.v.pop(var, None)
    else:
        mk.v[var] = saved
    return ' '.join(out)


FUNCTIONS = {
    'subst': f_subst, 'patsubst': f_patsubst,
    'filter': f_filter, 'filter-out': lambda mk, a, d: f_filter(mk, a, d, False),
    'if': f_if, 'and': f_and, 'or': f_or, 'findstring': f_findstring,
    'strip': f_words(' '.join), 'sort': f_words(lambda w: ' '.join(sorted(set(w)))),
    'firstword': f_words(lambda w: w[0] if w else ''),
    'notdir': f_words(lambda w: ' '.join(os.path.basename(x) for x in w)),
    'basename': f_words(lambda w: ' '.join(os.path.splitext(x)[0] for x in w)),
    'addprefix': f_fix(lambda p, w: p + w), 'addsuffix': f_fix(lambda p, w: w + p),
    'foreach': f_foreach, 'words': f_words(lambda w: str(len(w))),
    'dir': f_words(lambda w: ' '.join(os.path.dirname(x) + '/' for x in w)),
}
for _n in ('shell', 'info', 'warning', 'error', 'call', 'wildcard', 'eval', 'origin', 'cc-option',
           'as-instr', 'realpath', 'abspath', 'word', 'value'):
    FUNCTIONS.setdefault(_n, f_nothing(_n))


def logical_lines(text):
    """Joins continuation lines; drops comments and recipe lines (a tab-indented line
    is a recipe only after a rule: elsewhere make reads it as an ordinary line)."""
    lines, cur, in_rule = [], '', False
    for raw in text.split('\n'):
        if not cur and raw.startswith('\t') and in_rule:
            continue
        if not cur and raw.strip() and not raw.lstrip().startswith('#'):
            in_rule = is_rule(raw)
        line = re.sub(r'(?<!\\)#.*$', '', raw) if not raw.lstrip().startswith('#') else ''
        if line.endswith('\\'):
            cur += line[:-1] + ' '
            continue
        lines.append(cur + line)
        cur = ''
    if cur:
        lines.append(cur)
    return [l.strip() for l in lines if l.strip()]


def is_rule(line):
    """A 'targets: prerequisites' line: a colon outside $(...) before any '='."""
    depth = 0
    for i, ch in enumerate(line):
        if ch in '({':
            depth += 1
        elif ch in ')}':
            depth -= 1
        elif depth == 0 and ch == '=':
            return False
        elif depth == 0 and ch == ':':
            return line[i + 1:i + 2] != '=' and not re.match(r'^\s*(ifeq|ifneq|ifdef|ifndef|else|endif)\b', line)
    return False


def condition(mk, line):
    m = re.match(r'^(ifeq|ifneq|ifdef|ifndef)\s*(.*)$', line)
    kind, rest = m.group(1), m.group(2).strip()
    if kind in ('ifdef', 'ifndef'):
        defined = bool(mk.expand(mk.v.get(mk.expand(rest).strip(), '')).strip())
        return defined if kind == 'ifdef' else not defined
    if rest.startswith('('):
        a, b = (mk.expand(x).strip() for x in (split_args(rest[1:rest.rfind(')')]) + [''])[:2])
    else:
        q = re.findall(r'"([^"]*)"|\'([^\']*)\'', rest)
        a, b = (mk.expand(x[0] or x[1]).strip() for x in (q + [('', ''), ('', '')])[:2])
    return (a == b) if kind == 'ifeq' else (a != b)


def evaluate(mk, text):
    """Runs a Makefile's assignments under its conditionals."""
    stack = []          # (this branch taken, some branch taken, parent active)
    for line in logical_lines(text):
        active = all(s[0] for s in stack)
        if re.match(r'^(ifeq|ifneq|ifdef|ifndef)\b', line):
            taken = active and condition(mk, line)
            stack.append([taken, taken, active])
            continue
        if re.match(r'^else\b', line):
            if not stack:
                continue
            top = stack[-1]
            rest = line[4:].strip()
            if top[1] or not top[2]:
                top[0] = False
            elif rest:
                top[0] = condition(mk, rest)
            else:
                top[0] = True
            top[1] = top[1] or top[0]
            continue
        if re.match(r'^endif\b', line):
            if stack:
                stack.pop()
            continue
        if not active:
            continue
        m = re.search(r'(::=|:=|\+=|\?=|=)', line)
        if not m or ':' in line[:m.start()] or re.match(r'^(include|-include|sinclude|define|endef|undefine)\b', line):
            continue                                    # a rule, an include or a directive
        name = mk.expand(re.sub(r'^(export|override)\s+', '', line[:m.start()])).strip()
        op, val = m.group(1), line[m.end():].strip()
        if not name or ' ' in name:
            continue
        if op in (':=', '::='):
            mk.v[name] = mk.expand(val).replace('$', '$$')
        elif op == '+=':
            old = mk.v.get(name)
            mk.v[name] = (old + ' ' if old else '') + val
        elif op == '?=':
            mk.v.setdefault(name, val)
        else:
            mk.v[name] = val


def makefile_of(tree, d):
    for name in ('Kbuild', 'Makefile'):
        p = os.path.join(tree, d, name)
        if os.path.isfile(p):
            return p
    return None


def objects_of(tree, d, base_vars, warn, seen):
    """Yields (directory, object) for directory d and its subdirectories."""
    d = os.path.normpath(d)
    if d in seen:
        return
    seen.add(d)
    path = makefile_of(tree, d)
    if not path:
        warn('%s: no Kbuild or Makefile' % d)
        return
    mk = Make(base_vars, lambda msg: warn('%s: %s' % (path, msg)))
    mk.v.update({'obj': d, 'src': d})
    with open(path, errors='replace') as f:
        evaluate(mk, f.read())
    words = []
    for var in ('obj-y', 'lib-y', 'extra-y', 'core-y'):
        words += mk.expand(mk.v.get(var, '')).split()
    subdirs, objs = [], []
    for w in words:
        if w.endswith('/'):
            subdirs.append(w)
        elif w.endswith('.o'):
            objs.append(w)
    done = set()
    for o in objs:
        for part in parts_of(mk, o, 0):
            rel = os.path.normpath(os.path.join(d, part))
            if rel not in done:
                done.add(rel)
                yield d, rel
    for s in subdirs:
        yield from objects_of(tree, os.path.join(d, s), base_vars, warn, seen)


def parts_of(mk, o, depth):
    base = o[:-2]
    parts = (mk.expand(mk.v.get(base + '-y', '')) + ' ' + mk.expand(mk.v.get(base + '-objs', ''))).split()
    parts = [p for p in parts if p.endswith('.o')]
    if not parts or depth > 3:
        return [o]
    out = []
    for p in parts:
        out += [o] if p == o else parts_of(mk, p, depth + 1)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0].replace('\n', ' '),
                                 epilog=__doc__.split('\n\n', 2)[2],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--config', required=True, help='a .config (CONFIG_X=y lines) or option names, one a line')
    ap.add_argument('--var', action='append', default=[], metavar='NAME=VALUE',
                    help='a make variable the Makefiles use (BITS=32, SRCARCH=x86, ...); may repeat')
    ap.add_argument('--per-dir', action='store_true', help="print each directory's count")
    ap.add_argument('--list', action='store_true', help='print every object, relative to TREE')
    ap.add_argument('tree', metavar='TREE', help='the kernel tree (only its Makefiles and Kbuild files are read)')
    ap.add_argument('dirs', metavar='DIR', nargs='+',
                    help="the directories the top-level Makefile descends into, relative to TREE ('.': TREE's Kbuild)")
    a = ap.parse_args()
    try:
        variables = read_config(a.config)
    except OSError as e:
        print('kbuild_objects: %s: %s' % (a.config, e.strerror), file=sys.stderr)
        return 2
    for kv in a.var:
        if '=' not in kv:
            print("kbuild_objects: --var '%s': expected NAME=VALUE" % kv, file=sys.stderr)
            return 2
        k, val = kv.split('=', 1)
        variables[k] = val
    warned = set()

    def warn(msg):
        if msg not in warned:
            warned.add(msg)
            print('kbuild_objects: note: ' + msg, file=sys.stderr)

    seen, per_dir, all_objs = set(), {}, []
    for d in a.dirs:
        for dd, o in objects_of(a.tree, d, variables, warn, seen):
            if o in all_objs:
                continue
            all_objs.append(o)
            per_dir[dd] = per_dir.get(dd, 0) + 1
    if a.list:
        for o in all_objs:
            print(o)
    if a.per_dir:
        for dd in sorted(per_dir):
            print('%5d %s' % (per_dir[dd], dd))
    print('total %d' % len(all_objs))
    return 0


if __name__ == '__main__':
    sys.exit(main())
