#!/usr/bin/env bash
# Buckets on and off, side by side in one run (issue 15): a many-small-
# gradients model (bench/gen_llama_ir.py, LAYERS Llama blocks of hidden 16:
# 9 small parameters each), DDP on 2 ranks, K = 4, run by dist-run (JIT)
# with -dist-no-sync-pipeline's bucket-cap-bytes=0 and its default (25 MiB),
# alternating REPS times. Prints each run's window and always-sync
# throughput and the median ratios (buckets / none). dist-run checks every
# window's gradients against always-sync accumulation, so a run that prints
# "0 failed" also computed the right gradients.
# Environment: BUILD_DIR (default build), LAYERS (default 32), REPS (3).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
layers=${LAYERS:-32}
mpi=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
step=$(mktemp --suffix=.mlir)
trap 'rm -f "$step"' EXIT
python3 "$root/bench/gen_llama_ir.py" --layers "$layers" --hidden 16 --ffn 16 \
  --tokens 2 --mode ddp --world 2 > "$step"
echo "model: $layers Llama blocks (hidden 16), $((layers * 9)) gradients, DDP, W = 2, K = 4"
declare -A window always
for rep in $(seq "${REPS:-3}"); do
  for cap in 0 26214400; do
    out=$("${mpi[@]}" -np 2 "$build/bin/dist-run" "$step" --entry backward \
          --windows 6 --bucket-cap-bytes "$cap" 2>&1)
    grep -q " 0 failed" <<<"$out" || { echo "$out"; exit 1; }
    line=$(grep "^throughput:" <<<"$out")
    w=$(sed -E 's/throughput: ([0-9.]+) .*/\1/' <<<"$line")
    a=$(sed -E 's/.*no_sync, ([0-9.]+) always-sync.*/\1/' <<<"$line")
    window[$cap]+="$w "; always[$cap]+="$a "
    printf 'rep %d bucket-cap-bytes %-9s window %8s micro-batches/s, always-sync %8s\n' \
      "$rep" "$cap" "$w" "$a"
  done
done
python3 - "${window[0]}" "${window[26214400]}" "${always[0]}" "${always[26214400]}" <<'PY'
import statistics, sys
w0, w1, a0, a1 = ([float(x) for x in s.split()] for s in sys.argv[1:])
ratio = lambda on, off: statistics.median(x / y for x, y in zip(on, off))
print("buckets / none, median: one-round window x%.2f, always-sync (every step syncs) x%.2f"
      % (ratio(w1, w0), ratio(a1, a0)))
# From the same runs: a sync step takes t_s = 1 / always-sync throughput; a
# one-round window of K = 4 takes 3 t_ns + t_s; so a no_sync step takes
# t_ns = (4 / window - t_s) / 3, and the sync step's gradient communication
# is t_s - t_ns (the two steps differ by it and the stash add).
def sync_comm(w, a):
    t_s = 1 / a
    t_ns = (4 / w - t_s) / 3
    return t_s, t_ns, t_s - t_ns
rows = [(sync_comm(wo, ao), sync_comm(wn, an)) for wo, ao, wn, an in zip(w0, a0, w1, a1)]
for off, on in rows:
    print("sync step %.3f -> %.3f ms, no_sync step %.3f -> %.3f ms, sync step's communication "
          "%.3f -> %.3f ms" % (off[0] * 1e3, on[0] * 1e3, off[1] * 1e3, on[1] * 1e3,
                               off[2] * 1e3, on[2] * 1e3))
print("sync step x%.2f, its gradient communication x%.2f (median, none / buckets)"
      % (statistics.median(off[0] / on[0] for off, on in rows),
         statistics.median(off[2] / on[2] for off, on in rows)))
PY
