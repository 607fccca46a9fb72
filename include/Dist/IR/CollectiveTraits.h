//===- CollectiveTraits.h - what each collective is, in one table -*- C++
//-*-===//
//
// The facts about each kind of collective that the verifier, the passes, the
// communication report and the lowering all need: its name, how its result
// shape follows from its input, how many bytes it puts on the wire, and the
// runtime entry point it lowers to. Adding a collective adds one row here
// (docs/Design.md, "Adding a collective", lists the rest).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_IR_COLLECTIVETRAITS_H
#define DIST_IR_COLLECTIVETRAITS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace mlir::dist {

enum class CollectiveKind : uint8_t { AllGather, ReduceScatter, AllReduce };

/// How the result's extent along the collective's dim follows from the
/// input's, for a group of W ranks (every other extent is unchanged).
enum class ShapeRule : uint8_t { Same, TimesGroup, DividedByGroup };

struct CollectiveTraits {
  CollectiveKind kind;
  /// The op's mnemonic, as diagnostics and reports print it.
  llvm::StringLiteral name;
  /// The non-blocking entry point of dist_runtime.h it lowers to.
  llvm::StringLiteral runtimeFunction;
  ShapeRule shape;
  /// The attribute naming the dim the shape rule applies to ("" for Same).
  llvm::StringLiteral dimAttrName;
  /// Whether it combines values (takes a reduction kind).
  bool reduces;
  /// Ring-algorithm passes over the full tensor: each rank sends
  /// `ringPasses * (W - 1) / W` of the full tensor's bytes.
  unsigned ringPasses;

  /// The full (unsharded) tensor is the result of a gather and the input of
  /// everything else.
  bool fullTensorIsResult() const { return shape == ShapeRule::TimesGroup; }
  /// Bytes one rank sends per byte of the full tensor, in a group of `w`.
  double wireFactor(int64_t w) const {
    return w <= 0 ? 0.0 : double(ringPasses) * double(w - 1) / double(w);
  }
  /// The result extent for an input extent `in` over `w` ranks; std::nullopt
  /// when it does not exist (overflow, or an extent not divisible by `w`).
  std::optional<int64_t> resultExtent(int64_t in, int64_t w) const;
};

/// The row of `kind`.
const CollectiveTraits &getCollectiveTraits(CollectiveKind kind);

} // namespace mlir::dist

#endif // DIST_IR_COLLECTIVETRAITS_H
