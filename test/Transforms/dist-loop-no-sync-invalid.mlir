// A tied gradient accumulated in a loop from communication that cannot run
// once after the loop: an error at the op that prevents it.
// RUN: dist-opt %s -split-input-file -dist-loop-no-sync -verify-diagnostics

dist.mesh @world shape = [2]
dist.parameter @b : tensor<8xf32> replicated on @world

// Gradient clipping inside the loop reads the running synchronized sum.
func.func @reads_accumulator(%xs: tensor<4x8xf32>, %z: tensor<8xf32>)
    -> (tensor<8xf32> {dist.grad = @b}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %z) -> (tensor<8xf32>) {
    %g = tensor.extract_slice %xs[%k, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
    %s = dist.grad_sync %g for @b : tensor<8xf32> -> tensor<8xf32>
    // expected-error @below {{cannot synchronize the gradient of @b once after its accumulation loop: this op reads the accumulated gradient inside the loop}}
    %c = arith.mulf %a, %a : tensor<8xf32>
    %n = arith.addf %a, %s : tensor<8xf32>
    %m = arith.addf %n, %c : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<8xf32> replicated on @world

// The micro-batch's synced gradient is also read by something else.
func.func @synced_used_twice(%xs: tensor<4x8xf32>, %z: tensor<8xf32>)
    -> (tensor<8xf32> {dist.grad = @b}, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r:2 = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %z, %o = %z) -> (tensor<8xf32>, tensor<8xf32>) {
    %g = tensor.extract_slice %xs[%k, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
    %s = dist.grad_sync %g for @b : tensor<8xf32> -> tensor<8xf32>
    %n = arith.addf %a, %s : tensor<8xf32>
    // expected-error @below {{this op reads the micro-batch's synchronized gradient, which only the accumulation may read}}
    %m = arith.maximumf %o, %s : tensor<8xf32>
    scf.yield %n, %m : tensor<8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<8xf32> replicated on @world

// Not an accumulation: a running product of synced gradients.
func.func @not_additive(%xs: tensor<4x8xf32>, %z: tensor<8xf32>)
    -> (tensor<8xf32> {dist.grad = @b}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %z) -> (tensor<8xf32>) {
    %g = tensor.extract_slice %xs[%k, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
    %s = dist.grad_sync %g for @b : tensor<8xf32> -> tensor<8xf32>
    // expected-error @below {{the loop does not add the synchronized gradient to its accumulator (expected `scf.yield (arith.addf %acc, %synced)`)}}
    %n = arith.mulf %a, %s : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<8xf32> replicated on @world

// A max reduction is not linear: summing first would change it.
func.func @max_reduction(%xs: tensor<4x8xf32>, %z: tensor<8xf32>)
    -> (tensor<8xf32> {dist.grad = @b}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %z) -> (tensor<8xf32>) {
    %g = tensor.extract_slice %xs[%k, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
    // expected-error @below {{this collective's max reduction is not linear in the gradient (expected sum or avg)}}
    %f = dist.all_reduce %g on @world reduction = max : tensor<8xf32>
    %s = dist.wait %f : !dist.future<tensor<8xf32>>
    %n = arith.addf %a, %s : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<8xf32> replicated on @world

// A non-linear op after the sync (the square of the synced gradient).
func.func @nonlinear_after(%xs: tensor<4x8xf32>, %z: tensor<8xf32>)
    -> (tensor<8xf32> {dist.grad = @b}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %z) -> (tensor<8xf32>) {
    %g = tensor.extract_slice %xs[%k, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
    %s = dist.grad_sync %g for @b : tensor<8xf32> -> tensor<8xf32>
    // expected-error @below {{this op is not linear in the gradient}}
    %q = arith.mulf %s, %s : tensor<8xf32>
    %n = arith.addf %a, %q : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<8xf32> replicated on @world

// A scale by a value computed in the loop is not a constant scale.
func.func @scale_from_loop(%xs: tensor<4x8xf32>, %z: tensor<8xf32>)
    -> (tensor<8xf32> {dist.grad = @b}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %z) -> (tensor<8xf32>) {
    %g = tensor.extract_slice %xs[%k, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
    %s = dist.grad_sync %g for @b : tensor<8xf32> -> tensor<8xf32>
    // expected-error @below {{this op is not linear in the gradient}}
    %q = arith.mulf %s, %g : tensor<8xf32>
    %n = arith.addf %a, %q : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<8xf32> replicated on @world

// The running sum yielded for a second iteration argument too.
func.func @yield_twice(%xs: tensor<4x8xf32>, %z: tensor<8xf32>)
    -> (tensor<8xf32> {dist.grad = @b}, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant dense<0.0> : tensor<8xf32>
  %r:2 = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %zero, %o = %z) -> (tensor<8xf32>, tensor<8xf32>) {
    %g = tensor.extract_slice %xs[%k, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
    %s = dist.grad_sync %g for @b : tensor<8xf32> -> tensor<8xf32>
    %n = arith.addf %a, %s : tensor<8xf32>
    // expected-error @below {{the loop yields the running sum of synchronized gradients for another iteration argument too}}
    scf.yield %n, %n : tensor<8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<8xf32> replicated on @world

// A window's gradient starts from zeros.
func.func @from_argument(%xs: tensor<4x8xf32>, %z: tensor<8xf32>)
    -> (tensor<8xf32> {dist.grad = @b}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @below {{a window's gradient must be accumulated from zeros}}
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %z) -> (tensor<8xf32>) {
    %g = tensor.extract_slice %xs[%k, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
    %s = dist.grad_sync %g for @b : tensor<8xf32> -> tensor<8xf32>
    %n = arith.addf %a, %s : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<8xf32> replicated on @world
dist.parameter @c : tensor<8xf32> replicated on @world

// A window has no no_sync variants: nothing in it may write the stash.
func.func @stash_in_window(%xs: tensor<4x8xf32>)
    -> (tensor<8xf32> {dist.grad = @b}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant dense<0.0> : tensor<8xf32>
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %zero) -> (tensor<8xf32>) {
    %g = tensor.extract_slice %xs[%k, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
    // expected-error @below {{a window function (its gradients are accumulated by a loop and synchronized once after it) may not write the stash}}
    dist.stash_grad_for_fsdp %g for @c : tensor<8xf32>
    %s = dist.grad_sync %g for @b : tensor<8xf32> -> tensor<8xf32>
    %n = arith.addf %a, %s : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
