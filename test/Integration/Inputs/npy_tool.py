"""Small .npy files without numpy, for dist-run's tests.

  npy_tool.py PATH SHAPE VALUES [--descr '<f4'] [--version 1] [--truncate N]
                                [--magic BYTES] [--fortran] [--header DICT]
writes a file, well-formed or broken on purpose (SHAPE is "4", "2x3" or ""
for a scalar; VALUES is "1,2,3,4" or "arange"; '<i8' and '<i4' write
integers, any other descr float32);
  npy_tool.py --dump PATH...
prints each file's shape and float32 values, one file a line.
"""
import argparse
import struct
import sys

if sys.argv[1] == "--dump":
    for path in sys.argv[2:]:
        blob = open(path, "rb").read()
        length = struct.unpack("<H", blob[8:10])[0]
        header = blob[10:10 + length].decode("ascii")
        shape = header.split("'shape': (")[1].split(")")[0]
        data = blob[10 + length:]
        values = struct.unpack("<%df" % (len(data) // 4), data)
        print("%s: (%s) %s" % (path.split("/")[-1], shape, " ".join("%g" % v for v in values)))
    sys.exit(0)

parser = argparse.ArgumentParser()
parser.add_argument("path")
parser.add_argument("shape")
parser.add_argument("values")
parser.add_argument("--descr", default="<f4")
parser.add_argument("--version", type=int, default=1)
parser.add_argument("--truncate", type=int, default=0, help="drop this many trailing bytes")
parser.add_argument("--magic", default="\\x93NUMPY")
parser.add_argument("--fortran", action="store_true")
parser.add_argument("--header", default=None, help="this header dict instead")
a = parser.parse_args()

shape = [int(d) for d in a.shape.split("x")] if a.shape else []
count = 1
for d in shape:
    count *= d
values = list(range(count)) if a.values == "arange" else [float(v) for v in a.values.split(",")]
dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
    a.descr, "True" if a.fortran else "False", dims)
if a.header is not None:
    header = a.header
prefix = 12 if a.version == 2 else 10
header += " " * ((64 - (prefix + len(header) + 1) % 64) % 64) + "\n"
length = struct.pack("<I" if a.version == 2 else "<H", len(header))
magic = a.magic.encode("latin-1").decode("unicode_escape").encode("latin-1")
code = {"<i8": "<q", "<i4": "<i"}.get(a.descr, "<f")
data = b"".join(struct.pack(code, int(v) if code != "<f" else v) for v in values)
blob = magic + bytes([a.version, 0]) + length + header.encode("ascii") + data
with open(a.path, "wb") as f:
    f.write(blob[:len(blob) - a.truncate] if a.truncate else blob)
