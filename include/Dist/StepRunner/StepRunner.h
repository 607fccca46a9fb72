//===- StepRunner.h - a compiled step over accumulation windows -*- C++ -*-===//
//
// The one window loop of dist's drivers (dist-run, toy-train-*, the
// step-throughput benchmark): a compiled training step, whatever made it
// (JIT: JitStep.h; ahead of time: Step::linked), called through MLIR's C
// interface with memref descriptors of static f32 shapes, over a window of
// K micro-batches: @<entry>_no_sync for 1..K-1 and the one-round sync step
// @<entry> for K, or @<entry> every time (always-sync). Errors come back as
// llvm::Error; nothing here exits. No MLIR is linked (LLVMSupport only).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_STEPRUNNER_STEPRUNNER_H
#define DIST_STEPRUNNER_STEPRUNNER_H

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/FunctionExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace dist_step {

/// The two functions the no_sync pipeline leaves: @<entry>_no_sync adds the
/// local gradients to the stash, @<entry> (the sync step) communicates
/// (stash + g) / W in one round.
enum class Variant { NoSync, Sync };

/// How a window of K micro-batches calls them.
enum class Schedule {
  /// @<entry>_no_sync for micro-batches 1..K-1, @<entry> for K.
  OneRound,
  /// @<entry> for every micro-batch: with an empty stash it is the ordinary
  /// synchronized backward, K rounds of gradient communication.
  AlwaysSync,
};

/// The variant `schedule` calls for micro-batch `micro` (from 0) of `k`.
Variant variantOf(Schedule schedule, int micro, int k);

using Shape = std::vector<int64_t>;

/// The static f32 shapes of a step's arguments (the same for both variants)
/// and of each variant's results.
struct StepSignature {
  std::vector<Shape> args, syncResults, noSyncResults;
  const std::vector<Shape> &results(Variant variant) const {
    return variant == Variant::Sync ? syncResults : noSyncResults;
  }
};

/// Memref descriptors one after another, each laid out as
/// StridedMemRefType<float, rank>: a function's result struct, or its
/// arguments (each passed by its own pointer).
class Descriptors {
public:
  explicit Descriptors(llvm::ArrayRef<Shape> shapes);
  size_t size() const { return ranks.size(); }
  /// The address the C interface takes: descriptor i, or the whole struct.
  void *get(size_t i) { return storage.get() + offsets[i]; }
  void *get() { return storage.get(); }
  /// Points descriptor i at `data` with shape `shape`, identity layout and
  /// offset 0 (a slice is passed by its start pointer).
  void setIdentity(size_t i, float *data, llvm::ArrayRef<int64_t> shape);
  DynamicMemRefType<float> view(size_t i) const;

private:
  std::vector<int64_t> ranks;
  std::vector<size_t> offsets; // in words of 8 bytes
  std::unique_ptr<int64_t[]> storage;
};

/// The results of one call: the buffers the compiled code allocated, freed
/// when this is destroyed.
class Results {
public:
  explicit Results(Descriptors descriptors)
      : descriptors(std::move(descriptors)) {}
  Results(Results &&other) noexcept;
  Results &operator=(Results &&other) noexcept;
  Results(const Results &) = delete;
  Results &operator=(const Results &) = delete;
  ~Results() { release(); }

  size_t size() const { return descriptors.size(); }
  DynamicMemRefType<float> view(size_t i) const { return descriptors.view(i); }
  /// The elements of result i (identity layout, checked by Step::call).
  llvm::ArrayRef<float> values(size_t i) const;

private:
  void release();
  Descriptors descriptors;
  bool owned = true;
};

/// MLIR's packed calling convention (ExecutionEngine::invokePacked):
/// packed[j] points to argument j of _mlir_ciface_<function>; the result
/// struct's pointer comes first when the function has results.
using PackedCall = llvm::unique_function<llvm::Error(
    Variant variant, llvm::MutableArrayRef<void *> packed)>;

namespace detail {
template <typename... Ptrs, size_t... I>
void callUnpacked(void (*fn)(Ptrs...), void **packed,
                  std::index_sequence<I...>) {
  fn(static_cast<Ptrs>(*static_cast<void **>(packed[I]))...);
}
} // namespace detail

/// A compiled step: its signature and a way to call either variant.
class Step {
public:
  Step(StepSignature signature, PackedCall invoke)
      : sig(std::move(signature)), invoke(std::move(invoke)),
        argDescriptors(sig.args) {}

  /// A step linked ahead of time: its _mlir_ciface_<entry> and
  /// _mlir_ciface_<entry>_no_sync, each taking descriptor pointers only.
  template <typename... SyncPtrs, typename... NoSyncPtrs>
  static Step linked(StepSignature signature, void (*sync)(SyncPtrs...),
                     void (*noSync)(NoSyncPtrs...)) {
    return Step(
        std::move(signature),
        [sync, noSync](Variant variant,
                       llvm::MutableArrayRef<void *> packed) -> llvm::Error {
          if (variant == Variant::Sync && packed.size() == sizeof...(SyncPtrs))
            detail::callUnpacked(sync, packed.data(),
                                 std::index_sequence_for<SyncPtrs...>());
          else if (variant == Variant::NoSync &&
                   packed.size() == sizeof...(NoSyncPtrs))
            detail::callUnpacked(noSync, packed.data(),
                                 std::index_sequence_for<NoSyncPtrs...>());
          else
            return llvm::createStringError(
                "the linked step does not take %zu descriptors", packed.size());
          return llvm::Error::success();
        });
  }

  const StepSignature &signature() const { return sig; }

  /// Calls `variant` on one buffer per argument (identity layout, offset 0)
  /// and checks the results have the signature's shapes.
  llvm::Expected<Results> call(Variant variant, llvm::ArrayRef<float *> args);

private:
  StepSignature sig;
  PackedCall invoke;
  Descriptors argDescriptors;
};

/// One micro-step of a window, as the hooks see it.
struct MicroStep {
  int index; // from 0
  int count; // micro-batches in the window
  Variant variant;
  bool last() const { return index == count - 1; }
};

/// What a window asks of its driver.
struct WindowHooks {
  /// Fills `args` (empty on entry) with the micro-step's argument buffers,
  /// right before the call.
  llvm::function_ref<void(const MicroStep &, std::vector<float *> &args)>
      before;
  /// Sees the results right after the call; may move them out to keep them.
  llvm::function_ref<void(const MicroStep &, Results &)> after;
};

/// Runs one window of `k` micro-batches with `schedule`. Stops at the first
/// call that fails.
llvm::Error runWindow(Step &step, Schedule schedule, int k,
                      const WindowHooks &hooks);

} // namespace dist_step

#endif // DIST_STEPRUNNER_STEPRUNNER_H
