// RUN: dist-opt %s -split-input-file -verify-diagnostics --dist-no-sync-pipeline -o /dev/null
// RUN: dist-opt %s -split-input-file -verify-diagnostics -apply-no-sync -o /dev/null

// Steps the no_sync passes would not see, and syncs they cannot
// accumulate: said at the op, never an always-sync program with exit 0
// (issue 32, items 1 to 3).

// A step in another function op (ml_program.func): the passes transform
// func.func only.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world
// expected-error @below {{this 'ml_program.func' ties parameters or gradients, but the no_sync passes transform func.func steps only: write the step as a func.func}}
ml_program.func @step(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @w}) {
  %g = arith.mulf %w, %x : tensor<4xf32>
  ml_program.return %g : tensor<4xf32>
}

// -----

// A step in a nested module.
module {
  module @inner {
    dist.mesh @world shape = [2]
    dist.parameter @w : tensor<4xf32> replicated on @world
    // expected-error @below {{this step is in a nested module, but the no_sync passes transform the func.funcs of the module they run on}}
    func.func @step(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>)
        -> (tensor<4xf32> {dist.grad = @w}) {
      %g = arith.mulf %w, %x : tensor<4xf32>
      return %g : tensor<4xf32>
    }
  }
}

