#!/usr/bin/env python3
"""Keeps only the named event systems (or SYSTEM:EVENT, single events) of a trace.dat of file version 6 (uncompressed):
   trim_tracedat.py [--pages N] IN OUT SYSTEM[:EVENT]...   (trace-cmd convert --file-version 6 --compression none first)
The formats of every other system are dropped; the sections after them are copied, and the
flyrecord's per-CPU data moved to the new page-aligned offsets."""
import struct, sys

def main():
    args = sys.argv[1:]
    pages = None
    if args[0] == '--pages':
        pages = int(args[1])
        args = args[2:]
    src, dst, keep = args[0], args[1], set(args[2:])
    b = open(src, 'rb').read()
    assert b[:10] == b'\x17\x08\x44tracing', 'not a trace.dat'
    p = 10
    ver_end = b.index(b'\0', p)
    assert b[p:ver_end] == b'6', 'file version %r, not 6' % b[p:ver_end]
    p = ver_end + 1
    endian, long_size = b[p], b[p + 1]
    assert endian == 0, 'big-endian not handled'
    page = struct.unpack_from('<I', b, p + 2)[0]
    p += 6
    out = bytearray(b[:p])
    for name in (b'header_page\0', b'header_event\0'):
        assert b[p:p + len(name)] == name
        n = struct.unpack_from('<Q', b, p + len(name))[0]
        end = p + len(name) + 8 + n
        out += b[p:end]
        p = end
    count = struct.unpack_from('<I', b, p)[0]          # ftrace formats: kept
    q = p + 4
    for _ in range(count):
        q += 8 + struct.unpack_from('<Q', b, q)[0]
    out += b[p:q]
    p = q
    nsys = struct.unpack_from('<I', b, p)[0]
    p += 4
    kept = []
    for _ in range(nsys):
        z = b.index(b'\0', p)
        name = b[p:z]
        p = z + 1
        nev = struct.unpack_from('<I', b, p)[0]
        p += 4
        formats = []
        for _ in range(nev):
            n = struct.unpack_from('<Q', b, p)[0]
            text = b[p + 8:p + 8 + n]
            event = text.split(b'\n', 1)[0].split(b': ', 1)[-1].decode()
            if name.decode() in keep or '%s:%s' % (name.decode(), event) in keep:
                formats.append(b[p:p + 8 + n])
            p += 8 + n
        if formats:
            kept.append(name + b'\0' + struct.pack('<I', len(formats)) + b''.join(formats))
    out += struct.pack('<I', len(kept)) + b''.join(kept)
    n = struct.unpack_from('<I', b, p)[0]; out += b[p:p + 4 + n]; p += 4 + n      # kallsyms
    n = struct.unpack_from('<I', b, p)[0]; out += b[p:p + 4 + n]; p += 4 + n      # printk
    n = struct.unpack_from('<Q', b, p)[0]; out += b[p:p + 8 + n]; p += 8 + n      # cmdlines
    cpus = struct.unpack_from('<I', b, p)[0]; out += b[p:p + 4]; p += 4
    if b[p:p + 10] == b'options  \0':
        q = p + 10
        while True:
            oid = struct.unpack_from('<H', b, q)[0]
            q += 2
            if oid == 0:
                break
            q += 4 + struct.unpack_from('<I', b, q)[0]
        out += b[p:q]
        p = q
    assert b[p:p + 10] == b'flyrecord\0', 'not a flyrecord file'
    out += b[p:p + 10]
    p += 10
    spans = [struct.unpack_from('<QQ', b, p + 16 * i) for i in range(cpus)]
    p += 16 * cpus
    table = len(out)
    out += bytes(16 * cpus)
    rest_start = max(o + s for o, s in spans)
    fresh = []
    for off, size in spans:
        if pages is not None:
            size = min(size, pages * page)       # each CPU's first pages only
        out += bytes(-len(out) % page)
        fresh.append((len(out), size))
        out += b[off:off + size]
    for i, (off, size) in enumerate(fresh):
        struct.pack_into('<QQ', out, table + 16 * i, off, size)
    out += b[rest_start:]                                # what follows the data (none, or options)
    open(dst, 'wb').write(out)

main()
