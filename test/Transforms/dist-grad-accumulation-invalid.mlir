// RUN: dist-opt %s -split-input-file -dist-grad-accumulation -verify-diagnostics

dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

// The no_sync variant is checked for legality like -apply-no-sync.
func.func @clipped(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}, tensor<4xf32>) {
  %two = arith.constant dense<2.0> : tensor<4xf32>
  %d = arith.divf %g, %two : tensor<4xf32>
  %f = dist.all_reduce %d on @world reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  // expected-error @+1 {{skipping the gradient sync of @b would change the program}}
  %sq = arith.mulf %r, %r : tensor<4xf32>
  // expected-note @+1 {{the synchronized gradient is returned here as result #0}}
  return %r, %sq : tensor<4xf32>, tensor<4xf32>
}

// -----

// Regression: one sync consumes the stash and the other does not. The
// no_sync variant kept take_stash and threw the stash away every micro-step.
dist.mesh @world shape = [2]
dist.parameter @a : tensor<4xf32> replicated on @world
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @mixed(%g: tensor<4xf32>, %h: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @a}, tensor<4xf32> {dist.grad = @b}) {
  %t = dist.take_stash @a : tensor<4xf32>
  %x = arith.addf %t, %g : tensor<4xf32>
  %sa = dist.grad_sync %x for @a : tensor<4xf32> -> tensor<4xf32>
  // expected-error @+1 {{dist-grad-accumulation: result #1 of @mixed, the gradient of @b, does not consume the stash while other gradients of the function do: it is neither a no_sync nor a sync-step backward}}
  %sb = dist.grad_sync %h for @b : tensor<4xf32> -> tensor<4xf32>
  // expected-note @+1 {{returned here as result #1}}
  return %sa, %sb : tensor<4xf32>, tensor<4xf32>
}

// -----

// Regression: a backward whose tied results are all unrecognized was skipped
// before anything was reported: exit 0, no variant, no message.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

// (Averaged twice: an avg all_reduce, then divided by W.)
func.func @double_average(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  %two = arith.constant dense<2.0> : tensor<4xf32>
  // expected-error @+1 {{dist-grad-accumulation: result #0 of @double_average, the gradient of @b, is not a recognized gradient sync: expected a sum all_reduce over the parameter's axes, but found an avg all_reduce}}
  %f = dist.all_reduce %g on @world reduction = avg : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  %d = arith.divf %r, %two : tensor<4xf32>
  // expected-note @+1 {{returned here as result #0}}
  return %d : tensor<4xf32>
}

// -----

// A backward called from a train step: its no_sync variant would never be
// called (regression: it was written anyway, and the caller kept syncing).
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @backward(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  %s = dist.grad_sync %g for @b : tensor<4xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

func.func @train_step(%g: tensor<4xf32>, %p: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{dist-grad-accumulation: @backward is called here, but its no_sync variant would never be called; calls and references are not followed: inline it first (e.g. --inline) or rewrite the user}}
  %r = func.call @backward(%g) : (tensor<4xf32>) -> tensor<4xf32>
  %u = arith.subf %p, %r : tensor<4xf32>
  return %u : tensor<4xf32>
}

// -----

// Nothing synchronized at all (-dist-insert-grad-sync was not run): warned.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @local(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  // expected-warning @+1 {{dist-grad-accumulation: result #0 of @local, the gradient of @b, is not synchronized (run -dist-insert-grad-sync first): no _no_sync variant is written; left unchanged}}
  return %g : tensor<4xf32>
}

// -----

// The stash belongs to the passes. A backward that already stashes (say,
// after a Thunder-style rewrite) would stash twice in the no_sync variant
// and add the gradient twice in the sync step (regression: 2x the gradient).
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @stashes(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  // expected-error @+1 {{dist-grad-accumulation: the function already writes the stash here, outside the gradient syncs that the passes rewrite: a no_sync variant would stash twice or lose the window}}
  dist.stash_grad_for_fsdp %g for @b : tensor<4xf32>
  %s = dist.grad_sync %g for @b : tensor<4xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A stash released for logging: every no_sync micro-step would drop what it
// stashed (regression: only the last micro-batch reached the optimizer).
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @logs_stash(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}, tensor<4xf32>) {
  // expected-error @+1 {{dist-grad-accumulation: the function already releases the stash here}}
  %t = dist.take_stash @b : tensor<4xf32>
  %s = dist.grad_sync %g for @b : tensor<4xf32> -> tensor<4xf32>
  return %s, %t : tensor<4xf32>, tensor<4xf32>
}

// -----

// An unrelated function with the variant's name (regression: taken for the
// variant, so the window lost K-1 micro-batches without a word).
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

// expected-note @+1 {{the backward is here}}
func.func @step(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  %s = dist.grad_sync %g for @b : tensor<4xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// expected-error @+1 {{dist-grad-accumulation: cannot write the no_sync variant of @step: the module already has a symbol named @step_no_sync, which is not its variant}}
func.func @step_no_sync(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// The stash written through a call (found by an outside review: 2G, and
// dist-run's always-sync check shared the bug).
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func private @put(%x: tensor<4xf32>) {
  dist.stash_grad_for_fsdp %x for @b : tensor<4xf32>
  return
}

func.func @stashes_in_callee(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  // expected-error @+1 {{dist-grad-accumulation: this call may sync gradients or touch the stash (the callee does, or its body is not visible): the passes do not follow calls}}
  func.call @put(%g) : (tensor<4xf32>) -> ()
  %s = dist.grad_sync %g for @b : tensor<4xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A gradient sync that no tied result returns would still communicate in
// the no_sync variant.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @untied_sync(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}, tensor<4xf32>) {
  %s = dist.grad_sync %g for @b : tensor<4xf32> -> tensor<4xf32>
  // expected-error @+1 {{dist-grad-accumulation: this gradient sync is not the sync of a returned tied gradient: the no_sync variant would still communicate it}}
  %u = dist.grad_sync %g for @b : tensor<4xf32> -> tensor<4xf32>
  return %s, %u : tensor<4xf32>, tensor<4xf32>
}

// -----

// A function that names its no_sync variant must be its sync step; one
// whose gradient does not add the stash (here the stash is taken and
// dropped) is named for what it is, not as a taken symbol name (an outside
// tester's find).
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world

// expected-error @+1 {{dist-grad-accumulation: @step names its no_sync variant @step_no_sync (dist.no_sync_variant), so it must be its sync step, but the gradient of @w (result #0) does not add its stash: a sync step adds `dist.take_stash` to the gradient it syncs}}
func.func @step(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @w}) attributes {dist.no_sync_variant = @step_no_sync} {
  %g = arith.mulf %w, %x : tensor<4xf32>
  %t = dist.take_stash @w : tensor<4xf32>
  %s = dist.grad_sync %g for @w : tensor<4xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// expected-note @+1 {{the variant is here}}
func.func @step_no_sync(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>) {
  %g = arith.mulf %w, %x : tensor<4xf32>
  dist.stash_grad_for_fsdp %g for @w : tensor<4xf32>
  return
}
