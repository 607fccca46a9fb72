// What -dist-choose-stash may choose, by the form of the module.
// RUN: dist-opt %s -split-input-file -dist-choose-stash=budget=1000 | FileCheck %s
// RUN: dist-opt %s -split-input-file -dist-choose-stash=budget=1000 --remarks-filter=dist-choose-stash 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// A returned sync with another use (a norm): skipping it would change the
// norm, so only `synced` is legal for @f whatever the budget (found by an
// outside tester: the chooser picked `local` and -apply-no-sync refused it).
// @d's sync has no other use: `local`.
// REMARK: remark: [Passed] chosen {{.*}} Remark="the stash of @f is synced (its synced gradient has another use): 16 bytes
// REMARK: remark: [Passed] chosen {{.*}} Remark="the stash of @d is local: 32 bytes
// CHECK: dist.parameter @f {{.*}} stash = synced
// CHECK: dist.parameter @d {{.*}} stash = local
dist.mesh @m shape = [2]
dist.parameter @f : tensor<2x2xf32> fully_sharded on @m
dist.parameter @d : tensor<4x2xf32> replicated on @m

func.func @step(%gf: tensor<4x2xf32>, %gd: tensor<4x2xf32>)
    -> (tensor<2x2xf32> {dist.grad = @f}, tensor<4x2xf32> {dist.grad = @d},
        tensor<2x2xf32>) {
  %sf = dist.grad_sync %gf for @f : tensor<4x2xf32> -> tensor<2x2xf32>
  %sd = dist.grad_sync %gd for @d : tensor<4x2xf32> -> tensor<4x2xf32>
  %n = arith.mulf %sf, %sf : tensor<2x2xf32>
  return %sf, %sd, %n : tensor<2x2xf32>, tensor<4x2xf32>, tensor<2x2xf32>
}

// -----

// A module that already writes @f's stash (compiled without a budget) keeps
// its point, here the local gradient: choosing `synced` would contradict
// the stash ops it has.
// REMARK: remark: [Passed] chosen {{.*}} Remark="the stash of @f is local (its own): 32 bytes
// CHECK: dist.parameter @f : tensor<2x2xf32> fully_sharded on @m{{$}}
dist.mesh @m shape = [2]
dist.parameter @f : tensor<2x2xf32> fully_sharded on @m

func.func @step(%gf: tensor<4x2xf32>) -> (tensor<2x2xf32> {dist.grad = @f}) {
  %t = dist.take_stash @f : tensor<4x2xf32>
  %a = arith.addf %t, %gf : tensor<4x2xf32>
  %sf = dist.grad_sync %a for @f : tensor<4x2xf32> -> tensor<2x2xf32>
  return %sf : tensor<2x2xf32>
}

func.func @step_no_sync(%gf: tensor<4x2xf32>) {
  dist.stash_grad_for_fsdp %gf for @f : tensor<4x2xf32>
  return
}

// -----

// A negative budget is refused at the first parameter.
// RUN: not dist-opt %s -split-input-file -dist-choose-stash=budget=-3 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: dist-choose-stash-forms.mlir:[[@LINE+2]]:1: error: dist-choose-stash: expected a budget of 0 bytes or more (budget=<bytes>), but it is -3
dist.mesh @m shape = [2]
dist.parameter @f : tensor<2x2xf32> fully_sharded on @m
