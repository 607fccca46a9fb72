//===- MutatorEdits.h - the dist mutator's edits ----------------*- C++ -*-===//
//
// The edits mutateOnce draws from (DistMutator.cpp, with their weights).
// Each applies one kind of change to `s` and returns false, leaving `s`
// unchanged, when it found nothing to change; each is described at its
// definition. Token edits are in DistMutator.cpp, the edits that rewrite or
// insert whole ops, declarations and ties in MutatorOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_FUZZ_MUTATOREDITS_H
#define DIST_FUZZ_MUTATOREDITS_H

#include "MutatorText.h"

namespace dist_fuzz::edits {

using text::Rng;

// DistMutator.cpp
bool mutateTensorType(std::string &s, Rng &rng);
bool mutateElementTypeEverywhere(std::string &s, Rng &rng);
bool mutateIntList(std::string &s, Rng &rng);
bool mutateAxesClause(std::string &s, Rng &rng);
bool mutateCollectiveAxis(std::string &s, Rng &rng);
bool mutateKeyword(std::string &s, Rng &rng);
bool addPhase(std::string &s, Rng &rng);
bool mutateLines(std::string &s, Rng &rng);
bool mutateIntLiteral(std::string &s, Rng &rng);

// MutatorOps.cpp
bool mutateCollectiveKind(std::string &s, Rng &rng);
bool mutateTie(std::string &s, Rng &rng);
bool mutateSymbolRef(std::string &s, Rng &rng);
bool insertDeclaration(std::string &s, Rng &rng);
bool insertOp(std::string &s, Rng &rng);

} // namespace dist_fuzz::edits

#endif // DIST_FUZZ_MUTATOREDITS_H
