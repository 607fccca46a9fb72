#!/usr/bin/env python3
"""Checks that the runtime's trace is valid JSON whatever the event names.

check_trace_json.py TRACE_JSON_DUMP OUT_FILE: runs TraceJsonDump with names
holding quotes, backslashes, control characters and UTF-8, parses the file
with Python's json module (strictly: no NaN or Infinity) and checks that
every name and dtype comes back unchanged.
"""
import json
import subprocess
import sys

NAMES = [
    "all_reduce",
    'say "hi"',
    "back\\slash\\",
    "line\nfeed\r\ttab\bbell\x07\x01\x1f\x7f",
    "r\u00e9sum\u00e9 \u6f22\u5b57 /slash",
    "}], \"injected\": [{",
]


def reject(constant):
    raise ValueError("not JSON: " + constant)


def main():
    dump, path = sys.argv[1], sys.argv[2]
    subprocess.run([dump, path] + NAMES, check=True)
    with open(path, encoding="utf-8") as f:
        trace = json.load(f, parse_constant=reject)
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    names = [e["name"] for e in events]
    dtypes = [e["args"]["dtype"] for e in events]
    if names != NAMES or dtypes != NAMES:
        print("names do not round-trip:\n  wrote %r\n  read  %r\n  dtypes %r"
              % (NAMES, names, dtypes))
        return 1
    print("ok: %d events, names round-trip" % len(events))
    return 0


if __name__ == "__main__":
    sys.exit(main())
