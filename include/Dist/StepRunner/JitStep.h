//===- JitStep.h - a step compiled in process (JIT) ------------*- C++ -*-===//
//
// The JIT way to a dist_step::Step (dist-run): the no_sync pipeline, which
// leaves its own unbucketed output unchanged, an f32 boundary for a step of other float
// types (F32Boundary.h), then -dist-lower-to-llvm and MLIR's
// ExecutionEngine. Every rank of an mpirun job compiles the same module
// (docs/Design.md, "Running any step"). Links MLIR; StepRunner.h does not.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_STEPRUNNER_JITSTEP_H
#define DIST_STEPRUNNER_JITSTEP_H

#include "Dist/StepRunner/StepRunner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace dist_step {

struct JitOptions {
  /// The sync step; its no_sync variant is @<entry>_no_sync.
  std::string entry = "step";
  /// The no_sync pipeline's hsdp-partial option.
  bool hsdpPartial = false;
  /// @<entry> is a whole window (a loop over the micro-batches): there is
  /// no @<entry>_no_sync, and both variants of the step call @<entry>.
  bool window = false;
  /// The no_sync pipeline's bucket-cap-bytes (0: no buckets); negative: the
  /// pipeline's default.
  int64_t bucketCapBytes = -1;
  /// The no_sync pipeline's schedule option; std::nullopt: its default.
  std::optional<bool> schedule;
  /// The no_sync pipeline's keep-gathered option.
  bool keepGathered = false;
  /// The no_sync pipeline's reduce-dtype option; empty: none.
  std::string reduceDtype;
  /// The no_sync pipeline's stash-budget option; -1: none.
  int64_t stashBudget = -1;
  /// Shared libraries the JIT loads (the lowering may call MLIR's C runner
  /// utilities, memrefCopy for copies of views).
  std::vector<std::string> sharedLibPaths;
};

/// @<entry> and @<entry>_no_sync after the no_sync pipeline (@<entry> twice
/// for a window).
struct StepFunctions {
  mlir::func::FuncOp sync, noSync;
};

/// Runs the no_sync pipeline over `module` and finds both functions, public.
/// The pipeline refuses a @<entry>_no_sync that is not the variant of
/// @<entry>, which a name check alone would trust. `name` (the input file)
/// names the module in errors; the pipeline's own diagnostics go to the
/// context's handler.
llvm::Expected<StepFunctions> prepareStep(mlir::ModuleOp module,
                                          const JitOptions &options,
                                          llvm::StringRef name);

/// Gives the step and its no_sync variant (`fns`, from prepareStep) an f32
/// boundary if they compute in bf16, f16 or f64 (F32Boundary.h: `signature`
/// is the host's f32 view), lowers the prepared `module` to LLVM and
/// JIT-compiles it into a step with `signature` that calls their C
/// interfaces.
llvm::Expected<Step> jitStep(mlir::ModuleOp module, const JitOptions &options,
                             StepFunctions fns,
                             StepSignature signature);

} // namespace dist_step

#endif // DIST_STEPRUNNER_JITSTEP_H
