// dist's own steps of -dist-lower-to-llvm, each as a pass of its own
// (Passes.td says why each exists).
// RUN: dist-opt %s -split-input-file -dist-prepare-entry-points | FileCheck %s --check-prefix=ENTRY
// RUN: dist-opt %s -split-input-file -dist-keep-float-rounding | FileCheck %s --check-prefix=ROUND
// RUN: dist-opt %s -split-input-file -dist-math-to-libm-where-possible | FileCheck %s --check-prefix=LIBM
// RUN: dist-opt %s -split-input-file -dist-scf-to-cf-last-first | FileCheck %s --check-prefix=CF
// RUN: not dist-opt %s -split-input-file -dist-check-lowered-to-llvm 2>&1 | FileCheck %s --check-prefix=CHECKLLVM

// A public function is an entry point: C interface, read-only tensor
// arguments, and a result returned twice copied once. A private one is not.
// ENTRY-LABEL: func.func @entry
// ENTRY-SAME: %{{.*}}: tensor<4xf32> {bufferization.writable = false}
// ENTRY-SAME: %{{.*}}: i32
// ENTRY-SAME: attributes {llvm.emit_c_interface}
// ENTRY: %[[C:.*]] = bufferization.alloc_tensor() copy(%[[X:.*]]) : tensor<4xf32>
// ENTRY: return %[[X]], %[[C]]
// ENTRY-LABEL: func.func private @helper
// ENTRY-NOT: llvm.emit_c_interface
// ENTRY-NOT: writable
// ENTRY: // -----
// CHECKLLVM: error: -dist-lower-to-llvm did not finish: expected only llvm dialect ops, but got 'func.func', which it cannot lower
func.func @entry(%x: tensor<4xf32>, %n: i32) -> (tensor<4xf32>, tensor<4xf32>) {
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y, %y : tensor<4xf32>, tensor<4xf32>
}
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// The bf16 emulation's `contract` on its conversions is cleared: a
// truncf-extf pair must round.
// ROUND-LABEL: func.func @bf16_add
// ROUND: arith.extf %arg0 : bf16 to f32
// ROUND: arith.extf %arg1 : bf16 to f32
// ROUND: arith.truncf %{{[0-9]+}} : f32 to bf16
func.func @bf16_add(%a: bf16, %b: bf16) -> bf16 {
  %x = arith.extf %a fastmath<contract> : bf16 to f32
  %y = arith.extf %b fastmath<contract> : bf16 to f32
  %s = arith.addf %x, %y : f32
  %r = arith.truncf %s fastmath<contract> : f32 to bf16
  return %r : bf16
}

// -----

// erf becomes the C library's erff; ipowi, which libm lacks, is left (the
// final check names it) instead of failing the pass.
// LIBM-LABEL: func.func @gelu_parts
// LIBM: call @erff(%{{.*}}) : (f32) -> f32
// LIBM: math.ipowi
func.func @gelu_parts(%x: f32, %i: i32) -> (f32, i32) {
  %e = math.erf %x : f32
  %p = math.ipowi %i, %i : i32
  return %e, %p : f32, i32
}

// -----

// Two loops in one block, lowered last first: the same control flow as
// upstream's -convert-scf-to-cf.
// CF-LABEL: func.func @two_loops
// CF-NOT: scf.
// CF-COUNT-2: cf.cond_br
// CF: return
func.func @two_loops(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> f32 {
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  %b = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> f32 {
    %s = arith.mulf %acc, %x : f32
    scf.yield %s : f32
  }
  return %b : f32
}
