//===- F32Boundary.h - f32 entry points for any float step -----*- C++ -*-===//
//
// The step runner's host tensors are f32 (StepRunner.h; dist-run's seeds,
// .npy files, SGD and checks), but a step may compute in bf16, f16 or f64.
// A step whose signature has such a tensor gets an f32 boundary: the
// original becomes private (@<entry>.typed) and a public @<entry> of the same
// shapes in f32 converts each argument to the step's type, calls it, and
// converts each result back to f32. A bf16 parameter's master copy thus lives
// in f32 on the host and is rounded to bf16 (to nearest even) at each call,
// like a mixed-precision optimizer's master weights; its bf16 or f16
// gradient widens to f32 exactly. An f64 argument widens exactly; an f64
// result is rounded to f32. An integer data argument (i64 or i32 token ids,
// an i1 mask) is held as f32 integers, exact up to 2^24 in magnitude (the
// host checks), and converted exactly; integer results are not supported.
//
// The wrapper keeps the arguments' and results' attributes except the ties
// (dist.param, dist.grad): their verifier holds them to the parameter's own
// type, which an f32 wrapper of a bf16 parameter does not have. Read the
// ties, and the step's types, before the boundary is built.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_STEPRUNNER_F32BOUNDARY_H
#define DIST_STEPRUNNER_F32BOUNDARY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace dist_step {

/// Whether `type` is a tensor the boundary converts: statically shaped, of
/// bf16, f16 or f64, or of an integer type the host holds as f32.
bool needsF32Conversion(mlir::Type type);

/// Whether an argument of this element type is held as f32 integers by the
/// host: signless i1, i32 or i64.
bool isHostIntegerType(mlir::Type element);

/// Gives `func` (public, with a body) an f32 boundary if any of its
/// arguments or results needs one: renames it to a private @<name>.typed
/// (made unique) and adds the public f32 @<name> calling it. Returns the
/// public function, `func` itself when nothing needs converting.
mlir::func::FuncOp addF32Boundary(mlir::func::FuncOp func);

} // namespace dist_step

#endif // DIST_STEPRUNNER_F32BOUNDARY_H
