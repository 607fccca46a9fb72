// RUN: dist-opt %s -split-input-file -verify-diagnostics
// What the verifier refuses of the optimizer epilogue: it runs once per
// window, so it stays directly in a function's body, its results are only
// returned (untied), and the ops that give the micro-batches their meaning
// stay out of it.

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world
func.func @in_loop(%w: tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
    // expected-error @+1 {{'dist.epilogue' op expected to be directly in a function's body (it runs once per window), but its parent is 'scf.for'}}
    dist.epilogue (%w) : (tensor<4xf32>) -> () {
    ^bb0(%p: tensor<4xf32>):
      dist.epilogue_yield
    }
  }
  return
}

// -----

func.func @used_every_micro_batch(%w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.epilogue' op result #0 is used by an op that runs every micro-batch; only the function's return or another dist.epilogue may use it}}
  %n = dist.epilogue (%w) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%p: tensor<4xf32>):
    dist.epilogue_yield %p : tensor<4xf32>
  }
  // expected-note @+1 {{used here}}
  %m = arith.addf %n, %w : tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world
func.func @returned_tied(%w: tensor<4xf32> {dist.param = @w}) -> (tensor<4xf32> {dist.grad = @w}) {
  // expected-error @+1 {{'dist.epilogue' op result #0 is returned as the gradient of a parameter ({dist.grad}, result #0)}}
  %n = dist.epilogue (%w) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%p: tensor<4xf32>):
    dist.epilogue_yield %p : tensor<4xf32>
  }
  return %n : tensor<4xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world
func.func @sync_inside(%g: tensor<4xf32>) -> tensor<4xf32> {
  %n = dist.epilogue (%g) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%p: tensor<4xf32>):
    // expected-error @+1 {{'dist.grad_sync' may not be inside a dist.epilogue: it belongs to the micro-batches}}
    %s = dist.grad_sync %p for @w : tensor<4xf32> -> tensor<4xf32>
    dist.epilogue_yield %s : tensor<4xf32>
  }
  return %n : tensor<4xf32>
}

// -----

func.func @yield_types(%w: tensor<4xf32>) -> tensor<4xf32> {
  %n = dist.epilogue (%w) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%p: tensor<4xf32>):
    %c = arith.constant dense<0.0> : tensor<2xf32>
    // expected-error @+1 {{'dist.epilogue_yield' op expected to yield the epilogue's result types}}
    dist.epilogue_yield %c : tensor<2xf32>
  }
  return %n : tensor<4xf32>
}

// -----

func.func @block_types(%w: tensor<4xf32>) {
  // expected-error @+1 {{'dist.epilogue' op expected the region's arguments to have the operands' types}}
  dist.epilogue (%w) : (tensor<4xf32>) -> () {
  ^bb0(%p: tensor<8xf32>):
    dist.epilogue_yield
  }
  return
}

// -----

func.func @isolated(%w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %n = dist.epilogue () : () -> tensor<4xf32> {
    // expected-error @+1 {{using value defined outside the region}}
    dist.epilogue_yield %w : tensor<4xf32>
  }
  return %n : tensor<4xf32>
}

// -----

// expected-error @+1 {{'dist.next = 2' on result #0 names no argument (the function has 1)}}
func.func @next_out_of_range(%w: tensor<4xf32>) -> (tensor<4xf32> {dist.next = 2}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{result #0 is the next value of argument #0 (dist.next), but has type 'tensor<2xf32>', not 'tensor<4xf32>'}}
func.func @next_type(%w: tensor<4xf32>, %v: tensor<2xf32>) -> (tensor<2xf32> {dist.next = 0}) {
  return %v : tensor<2xf32>
}

// -----

// expected-error @+1 {{expected 'dist.next' on result #0 to be an argument number, but got "w"}}
func.func @next_not_index(%w: tensor<4xf32>) -> (tensor<4xf32> {dist.next = "w"}) {
  return %w : tensor<4xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world
func.func @shard_sum_int(%x: tensor<i32>) -> tensor<i32> {
  // expected-error @+1 {{'dist.shard_sum' op expected a float tensor, but got 'tensor<i32>'}}
  %s = dist.shard_sum %x for @w : tensor<i32>
  return %s : tensor<i32>
}

// -----

func.func @shard_sum_no_param(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'dist.shard_sum' op expected @nothing to name a dist.parameter, but it does not}}
  %s = dist.shard_sum %x for @nothing : tensor<f32>
  return %s : tensor<f32>
}
