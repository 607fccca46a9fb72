// An accumulation loop follows each parameter's stash point: @w (local)
// moves its sync after the loop, @v (synced) keeps its sync in the loop,
// which already accumulates what its window needs; both make the function a
// whole window.
// RUN: dist-opt %s -split-input-file -verify-diagnostics -dist-loop-no-sync | FileCheck %s
// RUN: dist-opt %s -split-input-file -verify-diagnostics -dist-no-sync-pipeline -dist-comm-report=micro-batches=3 -o /dev/null | FileCheck %s --check-prefix=REPORT
// The whole pipeline accepts the loop forms it keeps.
// RUN: dist-opt %s -split-input-file -verify-diagnostics -dist-no-sync-pipeline -o /dev/null

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x8xf32> fully_sharded on @world
dist.parameter @v : tensor<4x8xf32> fully_sharded on @world stash = synced

// CHECK-LABEL: func.func @window
// CHECK-SAME: attributes {dist.window}
// CHECK: scf.for
// CHECK-NOT: dist.grad_sync {{.*}} for @w
// CHECK: %[[SV:.*]] = dist.grad_sync %{{.*}} for @v : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK: arith.addf %{{.*}}, %[[SV]] : tensor<4x8xf32>
// CHECK: scf.yield
// CHECK: dist.grad_sync %{{.*}} for @w : tensor<8x8xf32> -> tensor<4x8xf32>
// Three reduce_scatters of @v per window, one of @w.
// REPORT: window reduce_scatter {{.*}} 3  @v
// REPORT: window reduce_scatter {{.*}} 1  @w
func.func @window(%xs: tensor<3x8x8xf32>)
    -> (tensor<4x8xf32> {dist.grad = @w}, tensor<4x8xf32> {dist.grad = @v}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant dense<0.0> : tensor<4x8xf32>
  %r:2 = scf.for %k = %c0 to %c3 step %c1 iter_args(%aw = %z, %av = %z)
      -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %x = tensor.extract_slice %xs[%k, 0, 0] [1, 8, 8] [1, 1, 1]
        : tensor<3x8x8xf32> to tensor<8x8xf32>
    %sw = dist.grad_sync %x for @w : tensor<8x8xf32> -> tensor<4x8xf32>
    %nw = arith.addf %aw, %sw : tensor<4x8xf32>
    %g = arith.mulf %x, %x : tensor<8x8xf32>
    %sv = dist.grad_sync %g for @v : tensor<8x8xf32> -> tensor<4x8xf32>
    %nv = arith.addf %av, %sv : tensor<4x8xf32>
    scf.yield %nw, %nv : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A loop kept for `synced` is checked like one to move: it must be the
// window's accumulation of its gradient.
dist.mesh @world shape = [2]
dist.parameter @v : tensor<4x8xf32> fully_sharded on @world stash = synced

func.func @not_from_zeros(%xs: tensor<3x8x8xf32>, %start: tensor<4x8xf32>)
    -> (tensor<4x8xf32> {dist.grad = @v}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  // expected-error @+1 {{cannot synchronize the gradient of @v once after its accumulation loop: a window's gradient must be accumulated from zeros}}
  %r = scf.for %k = %c0 to %c3 step %c1 iter_args(%av = %start)
      -> (tensor<4x8xf32>) {
    %x = tensor.extract_slice %xs[%k, 0, 0] [1, 8, 8] [1, 1, 1]
        : tensor<3x8x8xf32> to tensor<8x8xf32>
    %sv = dist.grad_sync %x for @v : tensor<8x8xf32> -> tensor<4x8xf32>
    %nv = arith.addf %av, %sv : tensor<4x8xf32>
    scf.yield %nv : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// At `synced` nothing moves, so another use of each micro-batch's synced
// gradient in the loop (a norm) is fine: it reads what it read (an outside
// tester found it refused).
dist.mesh @world shape = [2]
dist.parameter @v : tensor<4x8xf32> fully_sharded on @world stash = synced

// CHECK-LABEL: func.func @norm_in_loop
// CHECK-SAME: attributes {dist.window}
// CHECK: %[[SV:.*]] = dist.grad_sync %{{.*}} for @v
// CHECK: arith.mulf %[[SV]], %[[SV]]
// CHECK: arith.addf %{{.*}}, %[[SV]]
func.func @norm_in_loop(%xs: tensor<3x8x8xf32>)
    -> (tensor<4x8xf32> {dist.grad = @v}, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant dense<0.0> : tensor<4x8xf32>
  %r:2 = scf.for %k = %c0 to %c3 step %c1 iter_args(%av = %z, %an = %z)
      -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %x = tensor.extract_slice %xs[%k, 0, 0] [1, 8, 8] [1, 1, 1]
        : tensor<3x8x8xf32> to tensor<8x8xf32>
    %sv = dist.grad_sync %x for @v : tensor<8x8xf32> -> tensor<4x8xf32>
    %sq = arith.mulf %sv, %sv : tensor<4x8xf32>
    %nn = arith.maximumf %an, %sq : tensor<4x8xf32>
    %nv = arith.addf %av, %sv : tensor<4x8xf32>
    scf.yield %nv, %nn : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}
