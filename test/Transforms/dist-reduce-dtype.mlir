// reduce_dtype (FSDP2's MixedPrecisionPolicy reduce_dtype): a bf16
// gradient is stashed, pre-averaged and reduced in f32 and converted back
// once, after the last collective (docs/Design.md, "Element types").
// RUN: dist-opt %s -split-input-file "--dist-no-sync-pipeline=bucket-cap-bytes=0 schedule=false" | FileCheck %s
// RUN: dist-opt %s -split-input-file "--dist-no-sync-pipeline=bucket-cap-bytes=0 schedule=false hsdp-partial" | FileCheck %s --check-prefix=PARTIAL
// The pipeline leaves its own output unchanged (the conversions are part of
// the explicit chain it recognizes).
// RUN: dist-opt %s -split-input-file "--dist-no-sync-pipeline=bucket-cap-bytes=0 schedule=false" | dist-opt -split-input-file "--dist-no-sync-pipeline=bucket-cap-bytes=0 schedule=false" | FileCheck %s
// The pipeline's reduce-dtype option: @b (no reduce_dtype of its own) is
// stashed and reduced in f32 too.
// RUN: dist-opt %s -split-input-file "--dist-no-sync-pipeline=reduce-dtype=f32 bucket-cap-bytes=0 schedule=false" | FileCheck %s --check-prefix=PIPEOPT
// PIPEOPT-LABEL: func.func @step(
// PIPEOPT: dist.take_stash @b : tensor<4xf32>
// PIPEOPT: dist.all_reduce %{{.*}} : tensor<4xf32>
// PIPEOPT: arith.truncf %{{.*}} : tensor<4xf32> to tensor<4xbf16>
// The pipeline option gives it to parameters without their own.
// RUN: dist-opt %s -split-input-file -dist-set-reduce-dtype=dtype=f16 | FileCheck %s --check-prefix=SET
// The comm report counts the bytes on the wire: f32.
// RUN: dist-opt %s -split-input-file "--dist-no-sync-pipeline=bucket-cap-bytes=0" -dist-comm-report -o /dev/null | FileCheck %s --check-prefix=REPORT

dist.mesh @world shape = [2]
dist.parameter @w : tensor<2x4xbf16> fully_sharded on @world reduce_dtype = f32
dist.parameter @b : tensor<4xbf16> replicated on @world

// @w (ZeRO, f32): the variant stashes extf(g); the sync step adds it to
// extf(g), divides by W and reduce-scatters in f32, then truncates. @b has
// no reduce_dtype: bf16 throughout, as before.
// CHECK-LABEL: func.func @step(
// CHECK: %[[TW:.*]] = dist.take_stash @w : tensor<4x4xf32>
// CHECK-NEXT: %[[EW:.*]] = arith.extf %{{.*}} : tensor<4x4xbf16> to tensor<4x4xf32>
// CHECK-NEXT: %[[SW:.*]] = arith.addf %[[TW]], %[[EW]] : tensor<4x4xf32>
// CHECK: %[[AW:.*]] = arith.divf %[[SW]], %{{.*}} : tensor<4x4xf32>
// CHECK-NEXT: %[[FW:.*]] = dist.reduce_scatter %[[AW]] {{.*}} : tensor<4x4xf32> -> !dist.future<tensor<2x4xf32>>
// CHECK-NEXT: %[[RW:.*]] = dist.wait %[[FW]]
// CHECK-NEXT: %[[GW:.*]] = arith.truncf %[[RW]] : tensor<2x4xf32> to tensor<2x4xbf16>
// CHECK: dist.take_stash @b : tensor<4xbf16>
// CHECK: dist.all_reduce %{{.*}} : tensor<4xbf16>
// CHECK: return %[[GW]]
// CHECK-LABEL: func.func @step_no_sync(
// CHECK: %[[G:.*]] = arith.mulf
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[G]] : tensor<4x4xbf16> to tensor<4x4xf32>
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[E]] for @w : tensor<4x4xf32>
// CHECK: dist.stash_grad_for_fsdp %{{.*}} for @b : tensor<4xbf16>
// SET: dist.parameter @w : tensor<2x4xbf16> fully_sharded on @world reduce_dtype = f32
// SET: dist.parameter @b : tensor<4xbf16> replicated on @world reduce_dtype = f16
// K = 4: always-sync 4 * (32 gathered + 8 + 64) = 416 B; no_sync 3 * 32
// + 104 = 200 B.
// REPORT-DAG: step reduce_scatter 2 tensor<4x4xf32> 64 32.0 1  @w
// REPORT-DAG: step all_reduce 2 tensor<4xbf16> 8 8.0 1  @b
// REPORT: always-sync 416 bytes
// REPORT-NEXT: no_sync (one round) 200 bytes
func.func @step(%w: tensor<2x4xbf16> {dist.param = @w}, %b: tensor<4xbf16> {dist.param = @b},
                %x: tensor<4x4xbf16>)
    -> (tensor<2x4xbf16> {dist.grad = @w}, tensor<4xbf16> {dist.grad = @b}) {
  %wf = dist.synchronize %w on @world kind = fully_sharded : tensor<2x4xbf16> -> tensor<4x4xbf16>
  %bf = dist.synchronize %b on @world kind = replicated : tensor<4xbf16> -> tensor<4xbf16>
  %gw = arith.mulf %x, %wf : tensor<4x4xbf16>
  %gb = arith.addf %bf, %bf : tensor<4xbf16>
  %sw = dist.grad_sync %gw for @w : tensor<4x4xbf16> -> tensor<2x4xbf16>
  %sb = dist.grad_sync %gb for @b : tensor<4xbf16> -> tensor<4xbf16>
  return %sw, %sb : tensor<2x4xbf16>, tensor<4xbf16>
}

// -----

// HSDP: the shard phase leaves f32 (hsdp-partial stashes it), the
// replicate phase reduces in f32 and converts back.
dist.mesh @hsdp shape = [2, 2]
dist.parameter @h : tensor<2x4xbf16> fully_sharded on @hsdp axes = [1] replicate_axes = [0] reduce_dtype = f32

// CHECK-LABEL: func.func @hybrid(
// CHECK: dist.reduce_scatter %{{.*}} : tensor<4x4xf32> -> !dist.future<tensor<2x4xf32>>
// CHECK: dist.all_reduce %{{.*}} : tensor<2x4xf32>
// CHECK: arith.truncf %{{.*}} : tensor<2x4xf32> to tensor<2x4xbf16>
// PARTIAL-LABEL: func.func @hybrid(
// PARTIAL: %[[S:.*]] = dist.wait %{{.*}} : !dist.future<tensor<2x4xf32>>
// PARTIAL-NEXT: %[[T:.*]] = dist.take_stash @h at shard : tensor<2x4xf32>
// PARTIAL-NEXT: %[[A:.*]] = arith.addf %[[T]], %[[S]] : tensor<2x4xf32>
// PARTIAL-NEXT: dist.all_reduce %[[A]] {{.*}} : tensor<2x4xf32>
// PARTIAL-LABEL: func.func @hybrid_no_sync(
// PARTIAL: dist.reduce_scatter %{{.*}} : tensor<4x4xf32> -> !dist.future<tensor<2x4xf32>>
// PARTIAL: dist.stash_grad_for_fsdp %{{.*}} for @h at shard : tensor<2x4xf32>
func.func @hybrid(%h: tensor<2x4xbf16> {dist.param = @h}, %x: tensor<4x4xbf16>)
    -> (tensor<4x4xbf16> {dist.grad = @h}) {
  %hf = dist.synchronize %h on @hsdp axes = [1] kind = fully_sharded : tensor<2x4xbf16> -> tensor<4x4xbf16>
  %g = arith.mulf %x, %hf : tensor<4x4xbf16>
  return %g : tensor<4x4xbf16>
}

// -----

// An accumulation loop: the loop accumulates in f32 (as the stash would),
// the sync after it reads the f32 accumulator.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<8xbf16> replicated on @world reduce_dtype = f32

// CHECK-LABEL: func.func @window(
// CHECK: %[[L:.*]] = scf.for {{.*}} -> (tensor<8xf32>)
// CHECK: arith.extf %{{.*}} : tensor<8xbf16> to tensor<8xf32>
// CHECK: scf.yield
// CHECK: dist.all_reduce %{{.*}} : tensor<8xf32>
// CHECK: arith.truncf %{{.*}} : tensor<8xf32> to tensor<8xbf16>
func.func @window(%b: tensor<8xbf16> {dist.param = @b}, %xs: tensor<3x8xbf16>)
    -> (tensor<8xbf16> {dist.grad = @b}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant dense<0.0> : tensor<8xbf16>
  %r = scf.for %k = %c0 to %c3 step %c1 iter_args(%a = %z) -> (tensor<8xbf16>) {
    %x = tensor.extract_slice %xs[%k, 0] [1, 8] [1, 1] : tensor<3x8xbf16> to tensor<8xbf16>
    %s = dist.grad_sync %x for @b : tensor<8xbf16> -> tensor<8xbf16>
    %n = arith.addf %a, %s : tensor<8xbf16>
    scf.yield %n : tensor<8xbf16>
  }
  return %r : tensor<8xbf16>
}

// -----

// RUN: not dist-opt %s -split-input-file -dist-set-reduce-dtype=dtype=i8 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not dist-opt %s -split-input-file -dist-set-reduce-dtype=dtype=f32x 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: dist-set-reduce-dtype: expected a float type the runtime moves (f16, bf16, f32, f64), but got
// An explicit chain whose last truncf rounds its own way is not the plan's
// conversion (which rounds to nearest even): refused, not raised.
// RUN: not dist-opt %S/Inputs/reduce-dtype-rounding-mode.mlir --dist-no-sync-pipeline 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: error: dist-insert-grad-sync: result #0 of @step, the gradient of @p, is not a recognized gradient sync: expected the synced gradient converted from its reduce_dtype (tensor<4xf32>) to its element type here, by arith.extf or an arith.truncf without a rounding mode

// -----

// bf16 with an f16 reduce type (same width): converted through f32 both
// ways, exactly then with one rounding; idempotent like the rest.
dist.mesh @world shape = [2]
dist.parameter @p : tensor<4xbf16> replicated on @world reduce_dtype = f16

// CHECK-LABEL: func.func @same_width(
// CHECK: %[[T:.*]] = dist.take_stash @p : tensor<4xf16>
// CHECK-NEXT: %[[W:.*]] = arith.extf %{{.*}} : tensor<4xbf16> to tensor<4xf32>
// CHECK-NEXT: %[[N:.*]] = arith.truncf %[[W]] : tensor<4xf32> to tensor<4xf16>
// CHECK-NEXT: arith.addf %[[T]], %[[N]] : tensor<4xf16>
// CHECK: %[[R:.*]] = dist.wait %{{.*}} : !dist.future<tensor<4xf16>>
// CHECK-NEXT: %[[B:.*]] = arith.extf %[[R]] : tensor<4xf16> to tensor<4xf32>
// CHECK-NEXT: arith.truncf %[[B]] : tensor<4xf32> to tensor<4xbf16>
func.func @same_width(%p: tensor<4xbf16> {dist.param = @p}, %x: tensor<4xbf16>)
    -> (tensor<4xbf16> {dist.grad = @p}) {
  %s = dist.synchronize %p on @world kind = replicated : tensor<4xbf16> -> tensor<4xbf16>
  %g = arith.mulf %x, %s : tensor<4xbf16>
  return %g : tensor<4xbf16>
}
