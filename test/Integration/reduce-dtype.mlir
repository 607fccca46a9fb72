// A bf16 gradient accumulated over a window of K = 8 micro-batches with an
// f32 reduce_dtype (@a) and without (@b), on 2 ranks, through the no_sync
// pipeline, the lowering and the runtime's stash and all-reduce. Each
// micro-batch's gradient is 1 + 2^-6 (exact in bf16) on every rank, so the
// synced gradient is 8 * (1 + 2^-6) = 8.125, also exact in bf16. In f32 the
// stash holds every partial sum exactly: @a is 8.125. In bf16 (8 bits of
// mantissa, round to nearest even) the fifth partial sum 5.078125 lies
// halfway between 5.0625 and 5.09375 and rounds down, as do the next ones,
// and the last, 8.078125, rounds to 8.0625: @b is 8.0625.
// RUN: dist-opt %s --dist-no-sync-pipeline | sed -e '/^}$/d' > %t.mlir
// RUN: cat %S/Inputs/reduce-dtype-main.mlir >> %t.mlir
// RUN: dist-opt %t.mlir --dist-lower-to-llvm > %t.ll.mlir
// RUN: %mpirun -np 2 mlir-runner %t.ll.mlir -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%dist_runtime | FileCheck %s
// REQUIRES: mpi
// CHECK: f32 stash:
// CHECK-NEXT: [8.125, 8.125, 8.125, 8.125]
// CHECK: bf16 stash:
// CHECK-NEXT: [8.0625, 8.0625, 8.0625, 8.0625]

dist.mesh @world shape = [2]
dist.parameter @a : tensor<4xbf16> replicated on @world reduce_dtype = f32
dist.parameter @b : tensor<4xbf16> replicated on @world

func.func @step(%a: tensor<4xbf16> {dist.param = @a}, %b: tensor<4xbf16> {dist.param = @b},
                %x: tensor<4xbf16>)
    -> (tensor<4xbf16> {dist.grad = @a}, tensor<4xbf16> {dist.grad = @b}) {
  %sa = dist.synchronize %a on @world kind = replicated : tensor<4xbf16> -> tensor<4xbf16>
  %sb = dist.synchronize %b on @world kind = replicated : tensor<4xbf16> -> tensor<4xbf16>
  %ga = arith.mulf %x, %sa : tensor<4xbf16>
  %gb = arith.mulf %x, %sb : tensor<4xbf16>
  return %ga, %gb : tensor<4xbf16>, tensor<4xbf16>
}
