#!/usr/bin/env bash
# A data link cut in the middle of a job (issue 18): the ToyModel DDP step
# trains on 2 hosts (scripts/multihost.sh) until host 0's data link goes down
# 2 s in. Every rank must stop within the watchdog (DIST_WATCHDOG_TIMEOUT_MS
# = 3000) with the pending collective named, and the job must exit with the
# watchdog's status, DISTRT_EXIT_WATCHDOG (75), not timeout(1)'s 124, which
# bounds the whole test at 60 s so nothing can hang CI.
#   link_cut.sh TOY_TRAIN_BINARY
# Exits 77 (skipped) where multihost.sh cannot make namespaces.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
toy=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
DIST_WATCHDOG_TIMEOUT_MS=3000 timeout 60 "$root/scripts/multihost.sh" -- sh -c \
  '(sleep 2; ip link set ethd down) & $MULTIHOST_MPIRUN "$0" --windows 100000000' "$toy" \
  >"$out" 2>&1
rc=$?
elapsed=$(($(date +%s) - start))
cat "$out"
echo "link_cut: exit $rc after $elapsed s"
[ "$rc" = 77 ] && exit 77
fail() { echo "link_cut: FAIL: $1"; exit 1; }
[ "$rc" = 124 ] && fail "the job did not end: timeout(1) stopped it"
[ "$rc" = 75 ] || fail "expected the watchdog's exit status 75, got $rc"
grep -q 'watchdog: all_reduce on group .* has been pending for' "$out" ||
  fail "no watchdog message naming the pending all_reduce"
[ "$elapsed" -le 30 ] || fail "took $elapsed s (the watchdog's 3 s after a 2 s run)"
echo "link_cut: passed"
