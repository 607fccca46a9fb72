#!/usr/bin/python3
"""Wire bytes across two hosts against the communication report.

Runs a wide MLP step (examples/gen_toy.py, 256 -> 1024 -> 256) with dist-run
on 2 hosts x 1 rank (scripts/multihost.sh), DIST_STATS=1, one window of K = 4:
its no_sync window, then dist-run's always-sync check window. The compiler's
`-dist-comm-report` (same pipeline options) predicts the bytes each rank
sends per window, no_sync and always-sync ("wire_bytes_per_rank", for
bandwidth-optimal collectives); dist-run adds one 16-byte all-reduce of its
own (its statistics show it). The data link's counters give what each host
sent, less 66 bytes of Ethernet, IP and TCP headers per packet
(../shared/MACHINE-NOTES.md) and less the TCP segments the host sent again
(the kernel's TcpRetransSegs, 1448 bytes each: a full segment at MTU 1500
with timestamps; about 45 at a time, when a rank that was computing left its
peer's data unread). Checks each direction within 1% of the report, and
prints the runtime statistics' own figure next to it (DDP and ZeRO only).

HSDP (and hsdp-partial) run on 2 hosts x 2 ranks, mesh [2, 2]: the shards
are on axis 1, inside a host, and only the all-reduces on the replicate axis
cross hosts; a host sends its two ranks' share of those (the report's
all_reduce rows of @step, once in the no_sync window and K times in the
always-sync one).

  wire_bytes.py --build build MODE [--reduce-scatter auto|0|1]
(DIST_BLOCKING_REDUCE_SCATTER; with 0, libnbc's reduce-then-scatter, host 1
sends 1.38x what a ZeRO-2 window needs and the check fails).
Exits 77 (skipped) where multihost.sh cannot make namespaces.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADERS = 66  # bytes per packet
SEGMENT = 1448  # payload bytes of a full TCP segment

parser = argparse.ArgumentParser()
parser.add_argument("mode", choices=["ddp", "zero2", "zero3", "hsdp", "hsdp-partial"])
parser.add_argument("--build", default=os.path.join(ROOT, "build"))
parser.add_argument("--reduce-scatter", choices=["auto", "0", "1"], default="auto")
args = parser.parse_args()

K = 4
hybrid = args.mode.startswith("hsdp")
per_host = 2 if hybrid else 1
with tempfile.TemporaryDirectory() as tmp:
    step = os.path.join(tmp, "step.mlir")
    with open(step, "w") as f:
        subprocess.run([sys.executable, os.path.join(ROOT, "examples", "gen_toy.py"), "--mode",
                        "hsdp" if hybrid else args.mode, "--world", str(2 * per_host),
                        "--in", "256", "--hidden", "1024", "--out", "256", "--batch", "1"],
                       stdout=f, check=True)
    options = "bucket-cap-bytes=0" + (" hsdp-partial=true" if args.mode == "hsdp-partial" else "")
    report = subprocess.run(
        [os.path.join(args.build, "bin", "dist-opt"), step,
         "--dist-no-sync-pipeline=" + options,
         "--dist-comm-report=micro-batches=%d format=json" % K, "-o", os.devnull],
        stdout=subprocess.PIPE, universal_newlines=True, check=True)
    parsed = json.loads(report.stdout)
    window = parsed["window"]
    if hybrid:
        crossing = sum(c["wire_bytes_per_rank"] * c["calls_per_call"]
                       for c in parsed["collectives"]
                       if c["collective"] == "all_reduce" and c["function"] == "step")
        if any(c["collective"] == "all_reduce" and c["function"] != "step"
               for c in parsed["collectives"]):
            sys.exit("wire_bytes: an all_reduce outside @step: the count below would miss it")
        predicted = per_host * (1 + K) * crossing
    else:
        predicted = (window["no_sync"]["wire_bytes_per_rank"]
                     + window["always_sync"]["wire_bytes_per_rank"])
    env = dict(os.environ, DIST_STATS="1", DIST_BLOCKING_REDUCE_SCATTER=args.reduce_scatter)
    run = '$MULTIHOST_MPIRUN %s %s --k %d --windows 1 --bucket-cap-bytes 0%s' % (
        os.path.join(args.build, "bin", "dist-run"), step, K,
        " --hsdp-partial" if args.mode == "hsdp-partial" else "")
    # timeout(1) sends TERM: multihost.sh tears its namespaces down.
    p = subprocess.run(["timeout", "240", os.path.join(ROOT, "scripts", "multihost.sh"),
                        "--ranks-per-host", str(per_host), "--", "sh", "-c", run],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                       universal_newlines=True)
print(p.stdout)
if p.returncode == 77:
    sys.exit(77)
if p.returncode == 124:
    sys.exit("wire_bytes: the run did not end within 240 s")
if p.returncode != 0:
    sys.exit("wire_bytes: the run failed (exit %d)" % p.returncode)

FACTOR = {"all_gather": 0.5, "reduce_scatter": 0.5, "all_reduce": 1.0}  # W = 2
expected = {}
for rank, body in re.findall(r"distrt: rank (\d+) stats: (.*)", p.stdout):
    expected[int(rank)] = sum(FACTOR[kind] * int(n) for kind, n in
                              re.findall(r"(all_gather|reduce_scatter|all_reduce) \d+ calls (\d+) bytes", body))
sent = {int(h): (int(b), int(n), int(r)) for h, b, n, r in
        re.findall(r"multihost: host (\d+) data link: sent (\d+) bytes in (\d+) packets,"
                   r".*retransmitted: (\d+)", p.stdout)}
if sorted(expected) != list(range(2 * per_host)) or sorted(sent) != [0, 1]:
    sys.exit("wire_bytes: expected statistics of every rank and counters of hosts 0 and 1")
bad = False
for host in (0, 1):
    payload = sent[host][0] - HEADERS * sent[host][1] - SEGMENT * sent[host][2]
    # dist-run's own all-reduce (16 bytes) is not the step's.
    want = predicted + 16
    ratio = payload / want
    print("host %d: sent %d payload bytes (%d segments again); the comm report predicts %d "
          "(+16 of dist-run's own): ratio %.4f%s"
          % (host, payload, sent[host][2], predicted, ratio,
             "" if hybrid else "; the runtime's statistics need %d" % expected[host]))
    bad = bad or abs(ratio - 1) > 0.01
sys.exit(1 if bad else 0)
