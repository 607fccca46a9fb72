"""Rewrites the dist dialect's bytecode version in an MLIR bytecode file.

  rewrite-dist-version.py IN OUT --drop     as a dist from before bytecode
                                            version 1 wrote it (no version)
  rewrite-dist-version.py IN OUT --set N    as dist bytecode version N

Reads the container (mlir/Bytecode/Encoding.h: magic, MLIR bytecode
version, producer, then sections, each an ID byte whose high bit flags an
alignment, a varint length, and for aligned ones a varint alignment and
0xCB padding) and rewrites only the dist entry of the dialect section. It
shares no code with dist's own reader of the same layout.
"""
import sys


def read_varint(data, pos):
    first = data[pos]
    extra = 8 if first == 0 else (first & -first).bit_length() - 1
    raw = int.from_bytes(data[pos:pos + 1 + extra], "little")
    value = raw >> 8 if extra == 8 else raw >> (extra + 1)
    return value, pos + 1 + extra


def write_varint(value):
    for extra in range(8):
        if value < 1 << (7 * (extra + 1)):
            raw = ((value << 1) | 1) << extra
            return raw.to_bytes(extra + 1, "little")
    return b"\0" + value.to_bytes(8, "little")


def read_section(data, pos):
    ident = data[pos]
    length, pos = read_varint(data, pos + 1)
    align = None
    if ident & 0x80:
        align, pos = read_varint(data, pos)
        while pos % align:
            assert data[pos] == 0xCB
            pos += 1
    return ident & 0x7F, align, data[pos:pos + length], pos + length


def write_section(out, ident, align, payload):
    out += bytes([ident | (0x80 if align else 0)]) + write_varint(len(payload))
    if align:
        out += write_varint(align)
        while len(out) % align:
            out.append(0xCB)
    out += payload


def strings_of(section):
    count, pos = read_varint(section, 0)
    sizes = []
    for _ in range(count):
        size, pos = read_varint(section, pos)
        sizes.append(size)
    end, table = len(section), []
    for size in sizes:  # sizes are in reverse order
        table.insert(0, section[end - size:end - 1].decode())
        end -= size
    return table


def main():
    src, dst, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    data = open(src, "rb").read()
    assert data[:4] == b"ML\xefR", "not MLIR bytecode"
    version, pos = read_varint(data, 4)
    pos = data.index(b"\0", pos) + 1
    header, sections = data[:pos], []
    while pos < len(data):
        ident, align, payload, pos = read_section(data, pos)
        sections.append([ident, align, payload])
    table = strings_of(next(s[2] for s in sections if s[0] == 0))
    dialect = next(s for s in sections if s[0] == 1)
    body = dialect[2]
    count, pos = read_varint(body, 0)
    new = bytearray(write_varint(count))
    found = False
    for _ in range(count):
        entry, pos = read_varint(body, pos)
        name, has_version = table[entry >> 1], entry & 1
        start = pos
        if has_version:
            _, _, _, pos = read_section(body, pos)
        if name != "dist":
            new += write_varint(entry) + body[start:pos]
            continue
        found = True
        if mode == "--drop":
            new += write_varint((entry >> 1) << 1)
        else:
            new += write_varint(((entry >> 1) << 1) | 1)
            write_section(new, 7, None, write_varint(int(sys.argv[4])))
    assert found, "no dist dialect in the file"
    dialect[2] = bytes(new) + body[pos:]
    out = bytearray(header)
    for ident, align, payload in sections:
        write_section(out, ident, align, payload)
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main()
