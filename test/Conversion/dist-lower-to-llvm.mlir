// -dist-lower-to-llvm: what the pipeline guarantees beyond the runtime calls
// (convert-dist-to-runtime.mlir checks those).
// RUN: dist-opt %s -split-input-file --dist-lower-to-llvm -mlir-print-ir-after=one-shot-bufferize -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUF

// Arguments of public functions are the caller's buffers (the driver's
// parameters and data): One-Shot Bufferize must not write results into them.
// Before the fix `g = w * x` was computed in place, outs(%arg0), and the
// caller's parameter was overwritten with its gradient.
// BUF-LABEL: func.func @step(
// BUF-SAME: %[[W:[a-z0-9]+]]: memref<4xf32>, %[[X:[a-z0-9]+]]: memref<4xf32>)
// BUF-NOT: outs(%[[W]]
// BUF-NOT: outs(%[[X]]
// BUF: %[[G:.*]] = memref.alloc()
// BUF-NEXT: linalg.generic {{.*}} ins(%[[W]], %[[X]] : memref<4xf32>, memref<4xf32>) outs(%[[G]] : memref<4xf32>)
// BUF-NOT: outs(%[[W]]
// BUF-NOT: outs(%[[X]]
// BUF: return
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world
func.func @step(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @w}, tensor<4xf32>) {
  %g = arith.mulf %w, %x : tensor<4xf32>
  %s = arith.addf %x, %x : tensor<4xf32>
  %l = arith.mulf %s, %x : tensor<4xf32>
  return %g, %l : tensor<4xf32>, tensor<4xf32>
}
