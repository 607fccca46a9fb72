// Stash points under a memory budget. The figures, by hand: W = 4 on
// @world, 2 x 2 on @hsdp.
//   @d replicated 8x4xf32: local 128 B or synced 128 B; local saves its
//      all_reduce, 128 * 2 * 3/4 = 192 wire bytes per no_sync micro-batch;
//   @f fully_sharded 2x4xf32: local 8x4 = 128 B, synced 2x4 = 32 B; local
//      saves its reduce_scatter, 128 * 3/4 = 96;
//   @h hybrid 2x3xf32: local 4x3 = 48 B, shard or synced 24 B; local saves
//      the reduce_scatter (48 * 1/2) and the all_reduce (24 * 2 * 1/2), 48;
//      shard saves the all_reduce, 24;
//   @b fully_sharded 2x4xbf16, reduce_dtype f32: local 8x4xf32 = 128 B,
//      synced 2x4xf32 = 32 B, saves 96.
// The least is 128 + 32 + 24 + 32 = 216 bytes, everything 432.
// RUN: dist-opt %s -dist-choose-stash=budget=216 --remarks-filter=dist-choose-stash 2>&1 | FileCheck %s --check-prefix=B216
// RUN: dist-opt %s -dist-choose-stash=budget=230 | FileCheck %s --check-prefix=B230
// RUN: dist-opt %s -dist-choose-stash=budget=300 | FileCheck %s --check-prefix=B300
// RUN: dist-opt %s -dist-choose-stash=budget=336 | FileCheck %s --check-prefix=B336
// RUN: dist-opt %s -dist-choose-stash=budget=1000000 | FileCheck %s --check-prefix=ALL
// RUN: not dist-opt %s -dist-choose-stash=budget=215 2>&1 | FileCheck %s --check-prefix=BELOW
// RUN: not dist-opt %s -dist-choose-stash 2>&1 | FileCheck %s --check-prefix=NONE
// A parameter's own `stash` is kept and counted: @f at local makes the least
// 128 + 128 + 24 + 32 = 312.
// RUN: sed 's/^dist.parameter @f .*/& stash = local/' %s | not dist-opt -dist-choose-stash=budget=311 2>&1 | FileCheck %s --check-prefix=OWN
// RUN: sed 's/^dist.parameter @f .*/& stash = local/' %s | dist-opt -dist-choose-stash=budget=312 | FileCheck %s --check-prefix=OWN312
// Without buckets the pipeline, run again with other options (no budget:
// the stages run again), leaves the program unchanged at every point (the
// sync step of a `synced` parameter is recognized when expanded); only its
// record of the options differs.
// RUN: dist-opt %s "-dist-no-sync-pipeline=stash-budget=216 bucket-cap-bytes=0" > %t.once.mlir
// RUN: dist-opt %t.once.mlir "-dist-no-sync-pipeline=bucket-cap-bytes=0" | %drop_pipeline_record > %t.twice.mlir
// RUN: %drop_pipeline_record %t.once.mlir | diff - %t.twice.mlir
// The pipeline's option runs it first; its output has the points.
// RUN: dist-opt %s -dist-no-sync-pipeline=stash-budget=300 | FileCheck %s --check-prefix=PIPE

dist.mesh @world shape = [4]
dist.mesh @hsdp shape = [2, 2]
dist.parameter @d : tensor<8x4xf32> replicated on @world
dist.parameter @f : tensor<2x4xf32> fully_sharded on @world
dist.parameter @h : tensor<2x3xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]
dist.parameter @b : tensor<2x4xbf16> fully_sharded on @world
    reduce_dtype = f32
// Not returned as a gradient: not counted, left alone.
dist.parameter @frozen : tensor<2x4xf32> fully_sharded on @world

// @d's local stash costs nothing more than its synced one: always local.
// B216: remark: [Passed] chosen | Category:dist-choose-stash | Remark="the stash of @d is local: 128 bytes, 192 wire bytes per rank not sent per no_sync micro-batch"
// B216: remark: [Passed] chosen | Category:dist-choose-stash | Remark="the stash of @f is synced: 32 bytes, 0 wire bytes
// B216: remark: [Passed] chosen | Category:dist-choose-stash | Remark="the stash of @h is shard: 24 bytes, 24 wire bytes
// B216: remark: [Passed] chosen | Category:dist-choose-stash | Remark="the stash of @b is synced: 32 bytes
// B216: remark: [Analysis] counts | Category:dist-choose-stash | budget=216, granularity=1, local=1, memory=216, saved-wire-bytes=216, shard=1, synced=2
// B216-NOT: @frozen{{.*}}stash

// 14 spare bytes: only @h's free move to shard.
// B230: @d {{.*}} stash = local
// B230: @f {{.*}} stash = synced
// B230: @h {{.*}} stash = shard
// B230: @b {{.*}} stash = synced

// 84 spare bytes: @h local (24 more, 24 more saved); @f or @b would need 96.
// B300: @d {{.*}} stash = local
// B300: @f {{.*}} stash = synced
// B300: @h {{.*}} stash = local
// B300: @b {{.*}} stash = synced

// 120 spare bytes: @h and one of @f and @b (the earlier one) local.
// B336: @d {{.*}} stash = local
// B336: @f {{.*}} stash = local
// B336: @h {{.*}} stash = local
// B336: @b {{.*}} stash = synced

// ALL: @d {{.*}} stash = local
// ALL: @f {{.*}} stash = local
// ALL: @h {{.*}} stash = local
// ALL: @b {{.*}} stash = local
// ALL-NOT: @frozen{{.*}}stash

// BELOW: error: dist-choose-stash: expected a budget of at least 216 bytes, what the stashes of the 4 tied parameters hold at the least {{.*}} but it is 215 bytes
// NONE: error: dist-choose-stash: expected a budget of 0 bytes or more (budget=<bytes>), but it is -1
// OWN: error: dist-choose-stash: expected a budget of at least 312 bytes
// OWN312: @f {{.*}} stash = local
// OWN312: @h {{.*}} stash = shard
// OWN312: @b {{.*}} stash = synced

// PIPE: @h {{.*}} stash = local
// PIPE-LABEL: func.func @step(
// PIPE-LABEL: func.func @step_no_sync(
// @f's and @b's reduce_scatters still run (in one bucket); nothing else.
// PIPE-NOT: dist.all_reduce
// PIPE: dist.reduce_scatter {{.*}} : tensor<64xf32>
// PIPE-NOT: dist.all_reduce
// PIPE-NOT: dist.reduce_scatter
// PIPE: return
func.func @step(%gd: tensor<8x4xf32>, %gf: tensor<8x4xf32>,
                %gh: tensor<4x3xf32>, %gb: tensor<8x4xbf16>)
    -> (tensor<8x4xf32> {dist.grad = @d}, tensor<8x4xf32> {dist.grad = @f},
        tensor<4x3xf32> {dist.grad = @h}, tensor<8x4xbf16> {dist.grad = @b}) {
  return %gd, %gf, %gh, %gb
      : tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x3xf32>, tensor<8x4xbf16>
}
