//===- DistMutator.h - structure-aware mutations of dist modules -*- C++
//-*-===//
//
// Edits of a dist module's text at the level of its known tokens: tensor
// shapes and element types, mesh extents, axes, collective kinds, reductions,
// gather/scatter axes, parameter kinds, `dist.param`/`dist.grad` ties and
// symbol references. Each edit keeps the text mostly parseable (a shape is
// changed everywhere that type is spelled, a collective is rewritten with
// its own assembly and its wait's type), so the mutated module reaches the
// verifier and, when it verifies, the passes, the report and the lowering.
// No MLIR: the fuzz target and the `dist-fuzz-mutate` check tool share it.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_FUZZ_DISTMUTATOR_H
#define DIST_FUZZ_DISTMUTATOR_H

#include <cstdint>
#include <random>
#include <string>

namespace dist_fuzz {

/// Applies one structure-aware edit to `text`. Returns false (and leaves
/// `text` unchanged) when the drawn edit found nothing to change.
bool mutateOnce(std::string &text, std::mt19937_64 &rng);

/// Applies 1 to 4 edits; returns false when none applied.
bool mutateModuleText(std::string &text, std::mt19937_64 &rng);

} // namespace dist_fuzz

#endif // DIST_FUZZ_DISTMUTATOR_H
