#!/bin/sh
# Writes kvm-tracedat.dat.gz: a trace-cmd trace.dat of KVM host events BUILT BY HAND (no KVM host
# here: no /dev/kvm), with trace-cmd's own tools: `trace-cmd restore -c` takes the event formats
# of the running kernel's tracefs (kvm:kvm_exit, kvm_entry, kvm_cr, kvm_cpuid, kvm_msr as that
# kernel defines them), then `trace-cmd restore` wraps raw ring-buffer pages written here in the
# kernel's page layout (events/header_page, header_event: u64 time stamp, u64 commit, then
# events of a u32 header {type_len:5, time_delta:27} and the record: common fields, then the
# event's fields at the offsets its format gives). One vCPU (thread 4242 on CPU 0) of a
# shadow-paging guest: 300 exits (CR3 writes, CPUID, WRMSR), each kvm_exit, detail, kvm_entry,
# with costs from a fixed pseudo-random sequence. Needs trace-cmd, python3 and a kernel with
# the kvm tracepoints; /proc/kallsyms is hidden so that the file stays small.
# usage: traces/recorded/make-kvm-tracedat.sh [OUT]   (default: beside this script; as root)
set -e
out=${1:-$(dirname "$0")/kvm-tracedat.dat.gz}
T=/sys/kernel/tracing
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
python3 - "$T" "$d/cpu0.raw" <<'PY'
import re, struct, sys
tracefs, out = sys.argv[1], sys.argv[2]
def fmt(ev):
    txt = open(f"{tracefs}/events/kvm/{ev}/format").read()
    ident = int(re.search(r"ID: (\d+)", txt).group(1))
    fields = {m[0]: (int(m[1]), int(m[2])) for m in re.findall(r"field:[^;]*?(\w+)(?:\[\d*\])?;\s*offset:(\d+);\s*size:(\d+);", txt)}
    size = max(o + s for o, s in fields.values())
    return ident, fields, (size + 3) // 4 * 4
F = {e: fmt(e) for e in ("kvm_exit", "kvm_entry", "kvm_cr", "kvm_cpuid", "kvm_msr")}
def record(ev, pid, **vals):
    ident, fields, size = F[ev]
    b = bytearray(size)
    struct.pack_into("<HBBi", b, 0, ident, 0, 0, pid)
    for k, v in vals.items():
        off, sz = fields[k]
        b[off:off + sz] = int(v).to_bytes(sz, "little")
    return bytes(b)
seed = 4242
def rnd():
    global seed
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed / 2147483648
events, t, rip, pid = [], 5000000000, 0xffffffff81001000, 4242
def add(dt, data):
    global t
    t += dt
    events.append((t, data))
for i in range(300):
    k = rnd()
    add(int(2000 + rnd() * 30000), None)
    if k < 0.5:
        cr3 = (0x10000000, 0x10100000, 0x10200000)[int(rnd() * 3)]
        ev = [record("kvm_exit", pid, exit_reason=28, isa=1, guest_rip=rip, info1=3, vcpu_id=0),
              record("kvm_cr", pid, rw=1, cr=3, val=cr3)]; cost = 2400 + rnd() * 1200
    elif k < 0.75:
        ev = [record("kvm_exit", pid, exit_reason=10, isa=1, guest_rip=rip, vcpu_id=0),
              record("kvm_cpuid", pid, function=(0, 1, 7, 0xb)[int(rnd() * 4)], found=1)]; cost = 1600 + rnd() * 400
    else:
        ev = [record("kvm_exit", pid, exit_reason=32, isa=1, guest_rip=rip, vcpu_id=0),
              record("kvm_msr", pid, write=1, ecx=0x6e0, data=0x1234)]; cost = 1800 + rnd() * 600
    events[-1] = (t, ev[0])
    add(120, ev[1])
    add(int(cost / 2.4) - 120, record("kvm_entry", pid, vcpu_id=0, rip=rip))
pages, page, base, last = [], b"", None, None
def flush():
    global page, base
    if base is not None:
        pages.append(struct.pack("<QQ", base, len(page)) + page + b"\0" * (4080 - len(page)))
    page, base = b"", None
for ts, data in events:
    if data is None: continue
    if base is not None and len(page) + 4 + len(data) > 4080: flush()
    if base is None: base = last = ts
    page += struct.pack("<I", (len(data) // 4) | ((ts - last) << 5)) + data
    last = ts
flush()
open(out, "wb").write(b"".join(pages))
PY
unshare -m sh -c "mount --bind /dev/null /proc/kallsyms && trace-cmd restore -c -o '$d/head.dat'" >/dev/null
trace-cmd restore -i "$d/head.dat" -o "$d/kvm.dat" "$d/cpu0.raw" >/dev/null
gzip -9nc "$d/kvm.dat" > "$out"        # the formats of every event of the kernel: 2 MB, 130 kB gzipped
