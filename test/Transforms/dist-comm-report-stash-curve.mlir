// The report's curve of stash memory against gradient traffic per window:
// -dist-choose-stash's options (StashOptions.h) at evenly spaced budgets,
// and the module's own point. Its two ends agree with the report's own
// window totals, which count the collectives the pipeline wrote.
// RUN: dist-opt %s -dist-no-sync-pipeline -dist-comm-report -o /dev/null | FileCheck %s
// RUN: dist-opt %s -dist-no-sync-pipeline -dist-comm-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: dist-opt %s -dist-no-sync-pipeline=stash-budget=300 -dist-comm-report -o /dev/null | FileCheck %s --check-prefix=B300
// Points set by hand, below the curve: @f local, @h synced.
// RUN: sed 's/^dist.parameter @f .*/& stash = local/; s/replicate_axes = \[0\]/& stash = synced/' %s | dist-opt -dist-no-sync-pipeline -dist-comm-report -o /dev/null | FileCheck %s --check-prefix=OWN
// Only @f tied: its least-memory point is always-sync.
// RUN: sed 's/{dist.grad = @[dh]}//g' %s | dist-opt -dist-no-sync-pipeline -dist-comm-report -o /dev/null | FileCheck %s --check-prefix=FSDP
// The pipeline's hsdp-partial stashes @h's shard; without an attribute the
// report takes @h as local.
// RUN: dist-opt %s -dist-no-sync-pipeline=hsdp-partial -dist-comm-report -o /dev/null | FileCheck %s --check-prefix=PARTIAL
// RUN: dist-opt %s -dist-no-sync-pipeline=hsdp-partial -dist-comm-report=format=json -o /dev/null | FileCheck %s --check-prefix=PARTIAL-JSON
// RUN: sed 's/{dist.grad = @[dfh]}//g' %s | dist-opt -dist-comm-report -o /dev/null | FileCheck %s --check-prefix=NONE
// RUN: sed 's/{dist.grad = @[dfh]}//g' %s | dist-opt -dist-comm-report=format=json -o /dev/null | FileCheck %s --check-prefix=NONE-JSON

// By hand. W = 4 on @world, 2 x 2 on @hsdp; f32; K = 4 (the default).
// Wire bytes per rank: reduce_scatter and all_gather bytes x (W-1)/W,
// all_reduce bytes x 2(W-1)/W, bytes the full array.
//   @d replicated 4x4: all_reduce of 64 B on 4 ranks: 64 * 2 * 3/4 = 96.
//      local or synced: 64 B.
//   @f fully_sharded 4x4 (16x4 unsharded): reduce_scatter of 256 B on 4:
//      256 * 3/4 = 192. local 256 B, synced 64 B.
//   @h hybrid 4x4 sharded on axis 1 (8x4 unsharded), replicated on axis 0:
//      reduce_scatter of 128 B on 2: 128 * 1/2 = 64; all_reduce of its
//      64 B shard on 2: 64 * 2 * 1/2 = 64. local 128 B (saves 128),
//      shard 64 B (saves the all_reduce, 64), synced 64 B (saves 0).
//   @frozen: no tied gradient, not counted.
// Always-sync: 4 * (96 + 192 + 64 + 64) = 4 * 416 = 1664 wire bytes
// (bytes: 4 * (64 + 256 + 128 + 64) = 2048).
// A point saving s per no_sync micro-batch sends 1664 - 3 s per window.
// Least memory 64 + 64 + 64 = 192: @d local and @h shard cost nothing
// more, so it saves 96 + 64 = 160: 1664 - 480 = 1184.
// Then @h local (+64 B, +64 saved): 256 B, saves 224, 1664 - 672 = 992;
// @f local, @h shard (+192 B, +192): 384 B, saves 352, 1664 - 1056 = 608;
// all local: 448 B, saves 416, 1664 - 1248 = 416.
// The budgets 192 + 256 i / 15 reach 256 at i = 4, 384 at i = 12.
// No attribute: the module's point is all local, 448 B, 416: the report's
// one-round no_sync total (only the sync step's 416 per window).

// CHECK: step all_reduce 4 tensor<4x4xf32> 64 96.0 1  @d
// CHECK: always-sync 2048 bytes 1664.0 wire bytes/rank 16 calls
// CHECK-NEXT: no_sync (one round) 512 bytes 416.0 wire bytes/rank 4 calls
// CHECK: stash memory against gradient traffic per window (K = 4, 3 tied parameters;
// CHECK-NEXT: always-sync (every sync on every micro-batch): 1664.0 gradient wire bytes/rank
// CHECK-NEXT: stash bytes gradient wire B/rank saved/micro-batch local shard synced
// CHECK-NEXT: 192 1184.0 160.0 1 1 1{{$}}
// CHECK-NEXT: 256 992.0 224.0 2 0 1{{$}}
// CHECK-NEXT: 384 608.0 352.0 2 1 0{{$}}
// CHECK-NEXT: 448 416.0 416.0 3 0 0 chosen{{$}}
// CHECK-NEXT: chosen: the point of each parameter's stash ops, else its `stash`, else `local`

// JSON: "stash_curve": {
// JSON-NEXT: "always_sync_gradient_wire_bytes_per_rank": 1664,
// JSON-NEXT: "chosen": 3,
// JSON-NEXT: "granularity": 1,
// JSON-NEXT: "micro_batches": 4,
// JSON-NEXT: "points": [
// JSON-NEXT: {
// JSON-NEXT: "chosen": false,
// JSON-NEXT: "gradient_wire_bytes_per_rank": 1184,
// JSON-NEXT: "local": 1,
// JSON-NEXT: "on_curve": true,
// JSON-NEXT: "sampled": true,
// JSON-NEXT: "saved_wire_bytes_per_no_sync_micro_batch": 160,
// JSON-NEXT: "shard": 1,
// JSON-NEXT: "stash_bytes": 192,
// JSON-NEXT: "synced": 1
// JSON: "stash_bytes": 448,
// JSON: "tied_parameters": 3
// JSON: "no_sync": {
// JSON-NEXT: "bytes": 512,
// JSON-NEXT: "calls": 4,
// JSON-NEXT: "wire_bytes_per_rank": 416

// Budget 300: @h local, @f synced (256 B). No_sync micro-batches still
// reduce-scatter @f: 3 * 192 + 416 = 992, the point's figure.
// B300: step_no_sync reduce_scatter 4 tensor<16x4xf32> 256 192.0 1  @f
// B300: no_sync (one round) {{.*}} 992.0 wire bytes/rank
// B300: 256 992.0 224.0 2 0 1 chosen{{$}}

// @f local, @h synced: 64 + 256 + 64 = 384 B, saves 96 + 192 = 288:
// 1664 - 864 = 800, below the curve's 608 at the same memory (@h at shard
// instead saves 64 more). The no_sync micro-batches run @h's whole sync:
// 3 * (64 + 64) + 416 = 800. Two rounds: the sync step sends again only
// what no_sync skipped (@d, @f): 3 * 128 + 2 * (96 + 192) + 64 + 64 = 1088.
// OWN: step_no_sync reduce_scatter 2 tensor<8x4xf32> 128 64.0 1  @h
// OWN: step_no_sync all_reduce 2 tensor<4x4xf32> 64 64.0 1  @h
// OWN: no_sync (one round) 1088 bytes 800.0 wire bytes/rank 10 calls
// OWN-NEXT: two-round (Thunder) 1408 bytes 1088.0 wire bytes/rank 12 calls
// OWN: 256 992.0 224.0 2 0 1{{$}}
// OWN-NEXT: 384 800.0 288.0 2 0 1 chosen (below the curve){{$}}
// OWN-NEXT: 384 608.0 352.0 2 1 0{{$}}
// OWN: within the chosen point's memory the solver saves 352.0 wire bytes/rank per no_sync micro-batch, 64.0 more

// @f alone: synced 64 B sends 4 * 192 = 768 (always-sync), local 256 B
// sends 192 (one round).
// FSDP: always-sync 1024 bytes 768.0 wire bytes/rank 4 calls
// FSDP-NEXT: no_sync (one round) 256 bytes 192.0 wire bytes/rank 1 calls
// FSDP: 1 tied parameters
// FSDP-NEXT: 768.0 gradient wire bytes/rank
// FSDP-NEXT: stash bytes
// FSDP-NEXT: 64 768.0 0.0 0 0 1{{$}}
// FSDP-NEXT: 256 192.0 192.0 1 0 0 chosen{{$}}
// FSDP-NEXT: chosen:

// hsdp-partial: the no_sync micro-batches reduce-scatter @h: 3 * 64 + 416
// = 608, the 384 B point, which the report marks: it reads the point from
// the stash ops (`at shard`), not from the parameters, which say nothing.
// PARTIAL: no_sync (one round) {{.*}} 608.0 wire bytes/rank
// PARTIAL: 384 608.0 352.0 2 1 0 chosen{{$}}
// PARTIAL-NEXT: 448 416.0 416.0 3 0 0{{$}}
// PARTIAL-NEXT: chosen: the point of each parameter's stash ops
// The JSON's stashes, as the stash ops say: 64 + 256 + 64 = 384 bytes.
// PARTIAL-JSON: "stashes": [
// PARTIAL-JSON-NEXT: {
// PARTIAL-JSON-NEXT: "bytes": 64,
// PARTIAL-JSON-NEXT: "parameter": "d",
// PARTIAL-JSON-NEXT: "point": "local",
// PARTIAL-JSON-NEXT: "type": "tensor<4x4xf32>"
// PARTIAL-JSON: "bytes": 256,
// PARTIAL-JSON-NEXT: "parameter": "f",
// PARTIAL-JSON-NEXT: "point": "local",
// PARTIAL-JSON: "bytes": 64,
// PARTIAL-JSON-NEXT: "parameter": "h",
// PARTIAL-JSON-NEXT: "point": "shard",
// PARTIAL-JSON-NEXT: "type": "tensor<4x4xf32>"
// PARTIAL-JSON-NEXT: }
// PARTIAL-JSON-NEXT: ],

// NONE: stash memory against gradient traffic: no curve: no parameter has a gradient tied to it (dist.grad)
// NONE-JSON: "stash_curve": {
// NONE-JSON-NEXT: "skipped": "no parameter has a gradient tied to it (dist.grad)"

dist.mesh @world shape = [4]
dist.mesh @hsdp shape = [2, 2]
dist.parameter @d : tensor<4x4xf32> replicated on @world
dist.parameter @f : tensor<4x4xf32> fully_sharded on @world
dist.parameter @h : tensor<4x4xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]
dist.parameter @frozen : tensor<4x4xf32> fully_sharded on @world

func.func @step(%gd: tensor<4x4xf32>, %gf: tensor<16x4xf32>,
                %gh: tensor<8x4xf32>)
    -> (tensor<4x4xf32> {dist.grad = @d}, tensor<16x4xf32> {dist.grad = @f},
        tensor<8x4xf32> {dist.grad = @h}) {
  return %gd, %gf, %gh : tensor<4x4xf32>, tensor<16x4xf32>, tensor<8x4xf32>
}
