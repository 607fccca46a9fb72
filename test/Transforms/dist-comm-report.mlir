// RUN: dist-opt %s -dist-comm-report -o /dev/null | FileCheck %s
// RUN: dist-opt %s -dist-comm-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: dist-opt %s -dist-comm-report="output=%t.json format=json" -o /dev/null && FileCheck %s --check-prefix=JSON < %t.json
// RUN: dist-opt %s -dist-comm-report="micro-batches=8" -o /dev/null | FileCheck %s --check-prefix=K8
// After -dist-grad-accumulation the variant is counted K-1 times and the sync
// step once: the same totals as predicted from the synced backward alone.
// RUN: dist-opt %s -dist-grad-accumulation -dist-comm-report -o /dev/null | FileCheck %s --check-prefix=VARIANT
// VARIANT: bwd_no_sync all_gather 4 tensor<16x12xf32> 768 576.0 1  -
// VARIANT: always-sync 9552 bytes 7416.0 wire bytes/rank
// VARIANT: no_sync (one round) 7056 bytes 5400.0 wire bytes/rank
// VARIANT: two-round (Thunder) 7888 bytes 6072.0 wire bytes/rank
// The same once the syncs are expanded into their collectives.
// RUN: dist-opt %s -dist-grad-accumulation -dist-expand-grad-sync -dist-comm-report -o /dev/null | FileCheck %s --check-prefix=VARIANT
// Frontend IR, before any gradient sync: the report says so instead of
// reporting that no_sync saves nothing.
// RUN: dist-opt %S/../../examples/linear_fsdp.mlir -dist-comm-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNSYNCED
// UNSYNCED: warning: dist-comm-report: the module has gradients tied to parameters but no gradient sync (dist.grad_sync or a matching explicit chain): no_sync saves nothing here; run -dist-no-sync-pipeline first
// RUN: dist-opt %S/../../examples/linear_fsdp.mlir --dist-no-sync-pipeline -dist-comm-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=SYNCED --implicit-check-not=warning
// SYNCED: no_sync saves
// The report leaves the IR unchanged.
// RUN: dist-opt %s -dist-comm-report=output=%t.txt | FileCheck %s --check-prefix=IR
// RUN: not dist-opt %s -dist-comm-report=format=xml -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADFMT
// BADFMT: error: dist-comm-report: unknown format 'xml' (expected text or json)
// Byte counts are checked, not wrapped: 2^62 bytes per call is printed as is,
// a window total past int64 is an error.
// RUN: dist-opt %S/Inputs/comm-report-huge.mlir -dist-comm-report=micro-batches=1 -o /dev/null | FileCheck %s --check-prefix=HUGE
// HUGE: huge all_reduce 2 tensor<1073741824x1073741824xf32> 4611686018427387904
// HUGE: always-sync 4611686018427387904 bytes
// RUN: not dist-opt %S/Inputs/comm-report-huge.mlir -dist-comm-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=HUGE-K4
// HUGE-K4: error: dist-comm-report: the bytes of a window of 4 micro-batches overflow int64

// Hand-computed, W = 4, K = 4, f32 = 4 bytes, f16 = 2 bytes:
//   fwd all_gather 16x12xf32 = 768 B per call, ring 768*3/4 = 576 per rank
//   fwd all_reduce 10xf16 (loss) = 20 B, ring 20*2*3/4 = 30
//   bwd all_gather (ZeRO-3) = 768 B, ring 576
//   bwd reduce_scatter 16x12xf32 (gradient of @w) = 768 B, ring 576
//   bwd all_reduce 16xf32 (gradient of @b) = 64 B, ring 64*2*3/4 = 96
// Per micro-batch: non-gradient 1556 B (1182 ring), gradient 832 B (672).
//   always-sync = 4*(1556+832) = 9552 B, ring 4*1854 = 7416
//   no_sync     = 4*1556 + 832   = 7056 B, ring 4728 + 672 = 5400
//   two-round   = 4*1556 + 2*832 = 7888 B, ring 4728 + 1344 = 6072
// Calls: 5 per synced micro-batch, 3 per no_sync one (the gathers and the
// loss): always-sync 4*5 = 20, no_sync 3*3 + 5 = 14, two-round 14 + 2 = 16.
//   saved 2496 B = 26.1% of always-sync
// With K = 8: always 19104, no_sync 13280, two-round 14112.

// CHECK: dist communication report (K = 4 micro-batches per window)
// CHECK: fwd all_gather 4 tensor<16x12xf32> 768 576.0 1  -
// CHECK: fwd all_reduce 4 tensor<10xf16> 20 30.0 1  -
// CHECK: bwd all_gather 4 tensor<16x12xf32> 768 576.0 1  -
// CHECK: bwd reduce_scatter 4 tensor<16x12xf32> 768 576.0 1  @w
// CHECK: bwd all_reduce 4 tensor<16xf32> 64 96.0 1  @b
// CHECK: always-sync 9552 bytes 7416.0 wire bytes/rank 20 calls
// CHECK: no_sync (one round) 7056 bytes 5400.0 wire bytes/rank 14 calls
// CHECK: two-round (Thunder) 7888 bytes 6072.0 wire bytes/rank 16 calls
// CHECK: no_sync saves 2496 bytes per window (26.1% of always-sync)

// JSON: "array": "tensor<16x12xf32>",
// JSON-NEXT: "bytes": 768,
// JSON-NEXT: "calls_per_call": 1,
// JSON-NEXT: "collective": "all_gather",
// JSON-NEXT: "function": "fwd",
// JSON-NEXT: "gradient_of": null,
// JSON: "collective": "reduce_scatter",
// JSON-NEXT: "function": "bwd",
// JSON-NEXT: "gradient_of": "w",
// JSON-NEXT: "group_size": 4,
// JSON: "micro_batches": 4,
// JSON: "window": {
// JSON-NEXT: "always_sync": {
// JSON-NEXT: "bytes": 9552,
// JSON-NEXT: "calls": 20,
// JSON-NEXT: "wire_bytes_per_rank": 7416
// JSON: "no_sync": {
// JSON-NEXT: "bytes": 7056,
// JSON-NEXT: "calls": 14,
// JSON-NEXT: "wire_bytes_per_rank": 5400
// JSON: "two_round": {
// JSON-NEXT: "bytes": 7888,
// JSON-NEXT: "calls": 16,
// JSON-NEXT: "wire_bytes_per_rank": 6072

// The ToyModel, ZeRO-3, W = 2, K = 4, f32: fc1.weight 16x12 (768 B),
// fc1.bias 16 (64), fc2.weight 8x16 (512), fc2.bias 8 (32): 1376 B gathered,
// 688 B of shards. Per micro-batch the step gathers each twice (2752 B) and
// its sync reduce-scatters 1376 B; ring factor (W-1)/W = 1/2.
//   without the option: no_sync = 4 * 2752 + 1376 = 12384 B; gathers 32
//   calls, 11008 B (5504 on the wire);
//   with it: the first no_sync micro-batch gathers each once and keeps it,
//   everything after reuses, the sync step releases: 4 calls, 1376 B (688);
//   no_sync = 1376 + 1376 = 2752 B; always-sync runs the sync step 4 times,
//   each gathering once: 4 * (1376 + 1376) = 11008 B; two-round 1376 + 2 *
//   1376 = 4128 B. Kept between micro-batches: 1376 B, 688 B beyond the shards.
// KEEP-TOY: step gather_kept 2 tensor<16x12xf32> 768 384.0 1 (kept @fc1.weight)
// KEEP-TOY: always-sync 11008 bytes 5504.0 wire bytes/rank
// KEEP-TOY: no_sync (one round) 2752 bytes 1376.0 wire bytes/rank
// KEEP-TOY: two-round (Thunder) 4128 bytes 2064.0 wire bytes/rank
// KEEP-TOY: kept gathers (-dist-keep-gathered), 4 parameters kept, per no_sync window:
// KEEP-TOY: all_gather without keep-gathered 32 calls 11008 bytes 5504.0 wire bytes/rank
// KEEP-TOY: all_gather with keep-gathered 4 calls 1376 bytes 688.0 wire bytes/rank
// KEEP-TOY: keeping saves 28 all_gathers, 9632 bytes per window (87.5% of the gather bytes)
// KEEP-TOY: held between micro-batches: 1376 bytes of gathered parameters, 688 bytes beyond this rank's shards
// The same module without the option: its window is the "without" above.
// PLAIN-TOY: step all_gather 2 tensor<16x12xf32> 768 384.0 1 -
// PLAIN-TOY: always-sync 16512 bytes
// PLAIN-TOY: no_sync (one round) 12384 bytes
// K = 1: the sync step alone, gathering once; nothing is kept between
// micro-batches.
// KEEP-TOY-K1: all_gather without keep-gathered 8 calls 2752 bytes
// KEEP-TOY-K1: all_gather with keep-gathered 4 calls 1376 bytes
// KEEP-TOY-K1: held between micro-batches: 0 bytes of gathered parameters, 0 bytes beyond this rank's shards

// A Llama block, ZeRO-3 on 4 ranks, a separate forward: 9 parameters of
// 64 + 4 x 4096 + 64 + 3 x 11264 = 50304 f32, 201216 B gathered (50304 B of
// shards). The forward and the backward gather each per micro-batch: 18
// calls, 402432 B; x 4 = 72 calls, 1609728 B (x 3/4 on the wire: 1207296).
// With the option micro-batch 1 gathers in the forward (reuse_only: nothing
// kept yet, nothing kept after) and in the no_sync backward (kept); the
// other 3 micro-batches reuse: 18 calls, 402432 B (301824).
// KEEP-LLAMA: forward gather_kept 4 tensor<64xf32> 256 192.0 1 (reuses @layers.0.attn_norm)
// KEEP-LLAMA: backward gather_kept 4 tensor<64xf32> 256 192.0 1 (kept @layers.0.attn_norm)
// KEEP-LLAMA: kept gathers (-dist-keep-gathered), 9 parameters kept, per no_sync window:
// KEEP-LLAMA: all_gather without keep-gathered 72 calls 1609728 bytes 1207296.0 wire bytes/rank
// KEEP-LLAMA: all_gather with keep-gathered 18 calls 402432 bytes 301824.0 wire bytes/rank
// KEEP-LLAMA: keeping saves 54 all_gathers, 1207296 bytes per window (75.0% of the gather bytes)
// KEEP-LLAMA: held between micro-batches: 201216 bytes of gathered parameters, 150912 bytes beyond this rank's shards
// KEEP-JSON: "collective": "gather_kept",
// KEEP-JSON: "kept": {
// KEEP-JSON-NEXT: "keeps": false,
// KEEP-JSON-NEXT: "param": "layers.0.attn_norm"
// KEEP-JSON: "keep_gathered": {
// KEEP-JSON-NEXT: "all_gather_with": {
// KEEP-JSON-NEXT: "bytes": 402432,
// KEEP-JSON-NEXT: "calls": 18,
// KEEP-JSON-NEXT: "wire_bytes_per_rank": 301824
// KEEP-JSON-NEXT: },
// KEEP-JSON-NEXT: "all_gather_without": {
// KEEP-JSON-NEXT: "bytes": 1609728,
// KEEP-JSON-NEXT: "calls": 72,
// KEEP-JSON-NEXT: "wire_bytes_per_rank": 1207296
// KEEP-JSON-NEXT: },
// KEEP-JSON-NEXT: "held_bytes": 201216,
// KEEP-JSON-NEXT: "held_bytes_beyond_shards": 150912,
// KEEP-JSON-NEXT: "kept_parameters": 9

// K8: always-sync 19104 bytes
// K8: no_sync (one round) 13280 bytes
// K8: two-round (Thunder) 14112 bytes

// IR: func.func @bwd
// IR: dist.reduce_scatter

dist.mesh @world shape = [4]
dist.parameter @w : tensor<4x12xf32> fully_sharded on @world
dist.parameter @b : tensor<16xf32> replicated on @world

func.func @fwd(%w: tensor<4x12xf32> {dist.param = @w}, %loss: tensor<10xf16>)
    -> (tensor<16x12xf32>, tensor<10xf16>) {
  %f = dist.all_gather %w on @world gather_axis = 0
      : tensor<4x12xf32> -> !dist.future<tensor<16x12xf32>>
  %full = dist.wait %f : !dist.future<tensor<16x12xf32>>
  %l = dist.all_reduce %loss on @world reduction = avg : tensor<10xf16>
  %lr = dist.wait %l : !dist.future<tensor<10xf16>>
  return %full, %lr : tensor<16x12xf32>, tensor<10xf16>
}

func.func @bwd(%w: tensor<4x12xf32> {dist.param = @w}, %gb: tensor<16xf32>)
    -> (tensor<4x12xf32> {dist.grad = @w}, tensor<16xf32> {dist.grad = @b}) {
  %f = dist.all_gather %w on @world gather_axis = 0
      : tensor<4x12xf32> -> !dist.future<tensor<16x12xf32>>
  %full = dist.wait %f : !dist.future<tensor<16x12xf32>>
  %gw = arith.mulf %full, %full : tensor<16x12xf32>
  %four = arith.constant dense<4.0> : tensor<16x12xf32>
  %d = arith.divf %gw, %four : tensor<16x12xf32>
  %rs = dist.reduce_scatter %d on @world reduction = sum scatter_axis = 0
      : tensor<16x12xf32> -> !dist.future<tensor<4x12xf32>>
  %r = dist.wait %rs : !dist.future<tensor<4x12xf32>>
  %four_b = arith.constant dense<4.0> : tensor<16xf32>
  %db = arith.divf %gb, %four_b : tensor<16xf32>
  %ar = dist.all_reduce %db on @world reduction = sum : tensor<16xf32>
  %rb = dist.wait %ar : !dist.future<tensor<16xf32>>
  return %r, %rb : tensor<4x12xf32>, tensor<16xf32>
}
// keep-gathered: kept gathers are followed through the window in program
// order (a separate forward first, then the window's variant); the report
// gives the window's all_gathers with and without the option and the bytes
// kept between micro-batches.
// RUN: dist-opt %dist_src_root/examples/toy/toy_zero3_w2.mlir "--dist-no-sync-pipeline=keep-gathered bucket-cap-bytes=0" -dist-comm-report -o /dev/null | FileCheck %s --check-prefix=KEEP-TOY
// RUN: dist-opt %dist_src_root/examples/toy/toy_zero3_w2.mlir --dist-no-sync-pipeline=bucket-cap-bytes=0 -dist-comm-report -o /dev/null | FileCheck %s --check-prefix=PLAIN-TOY --implicit-check-not="kept gathers"
// RUN: dist-opt %dist_src_root/examples/toy/toy_zero3_w2.mlir "--dist-no-sync-pipeline=keep-gathered bucket-cap-bytes=0" -dist-comm-report=micro-batches=1 -o /dev/null | FileCheck %s --check-prefix=KEEP-TOY-K1
// RUN: %python %dist_src_root/bench/gen_llama_ir.py --layers 1 --world 4 --mode zero3 | dist-opt "--dist-no-sync-pipeline=keep-gathered bucket-cap-bytes=0" -dist-comm-report -o /dev/null | FileCheck %s --check-prefix=KEEP-LLAMA
// RUN: %python %dist_src_root/bench/gen_llama_ir.py --layers 1 --world 4 --mode zero3 | dist-opt "--dist-no-sync-pipeline=keep-gathered bucket-cap-bytes=0" -dist-comm-report=format=json -o /dev/null | FileCheck %s --check-prefix=KEEP-JSON
// K = 10^15 in closed form (the kept gathers' micro-batches repeat; it
// used to run a loop of K steps): @weight gathered twice per micro-batch
// unkept, 2K, against twice per window kept.
// RUN: dist-opt %dist_src_root/examples/linear_fsdp.mlir "--dist-no-sync-pipeline=keep-gathered" -dist-comm-report=micro-batches=1000000000000000 -o /dev/null | FileCheck %s --check-prefix=HUGE-KEEP
// HUGE-KEEP: no_sync (one round) 2368 bytes 1216.0 wire bytes/rank 4 calls
// HUGE-KEEP: keeping saves 1999999999999998 all_gathers, 1535999999999998464 bytes per window
// HUGE-KEEP: held between micro-batches: 768 bytes of gathered parameters, 384 bytes beyond this rank's shards
// RUN: not dist-opt %s -dist-comm-report=micro-batches=-1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADK
// BADK: error: dist-comm-report: micro-batches must be at least 1, but got -1
// A collective in a loop runs once per iteration: counted times the trip
// count; without a constant trip count the report says it counts it once.
// RUN: dist-opt %S/Inputs/comm-report-loop.mlir -dist-comm-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOOP
// LOOP: comm-report-loop.mlir:{{.*}} warning: dist-comm-report: this collective is inside a loop without a constant trip count; the report counts it once per call
// LOOP: loop all_reduce 2 tensor<4xf32> 16 16.0 8  -
// LOOP-NEXT: dynamic_loop all_reduce 2 tensor<4xf32> 16 16.0 1  -
// LOOP: always-sync 192 bytes
