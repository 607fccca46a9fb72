// Valid inputs that crashed dist-opt, found by fuzz/dist-fuzz: each must
// verify, and pass through the report and the lowering.
// RUN: dist-opt %s -split-input-file | FileCheck %s
// RUN: dist-opt %s -split-input-file --dist-comm-report=output=/dev/null | FileCheck %s
// RUN: dist-opt %s -split-input-file --dist-lower-to-llvm | FileCheck %s --check-prefix=LLVM

// An all_reduce of a scalar tensor: the verifier read dim 0 of the 0-d
// input before seeing that an all_reduce keeps its whole type (SIGSEGV).
dist.mesh @world shape = [2]
// CHECK-LABEL: func.func @all_reduce_scalar
// CHECK: dist.all_reduce %{{.*}} on @world reduction = sum : tensor<f32>
// LLVM-LABEL: llvm.func @all_reduce_scalar
// LLVM: llvm.call @distrt_all_reduce_async
func.func @all_reduce_scalar(%x: tensor<f32>) -> tensor<f32> {
  %f = dist.all_reduce %x on @world reduction = sum : tensor<f32>
  %r = dist.wait %f : !dist.future<tensor<f32>>
  return %r : tensor<f32>
}
