//===- Communication.h - what a value's computation communicates -*- C++ -*-===//
//
// Whether a value is the rank-local result of local compute, or depends on
// communication: the test by which a tied gradient is proven local (and so
// may be synced), and by which a stashed value is told to be a shard.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_ANALYSIS_COMMUNICATION_H
#define DIST_ANALYSIS_COMMUNICATION_H

#include "Dist/IR/DistOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::dist {

/// Finds communication that a value is computed from: a gradient sync, a
/// reducing collective, the stash, or a call that may do any of them. A
/// gather of an argument tied to a parameter is not: that is how ZeRO-3
/// brings a parameter back. One forward pass over the function marks every
/// op of its body with the first communication it depends on (an op with
/// regions depends on everything nested in it), so a query is a lookup: a
/// training step has thousands of gradients in one function.
class CommunicationFinder {
public:
  CommunicationFinder(SymbolTableCollection &symbolTable,
                      FunctionOpInterface func)
      : symbolTable(symbolTable), func(func) {}

  /// The first communicating op `value` depends on, or null. An scf.for
  /// result depends on what its iterations compute for it, not on the
  /// whole loop.
  Operation *findIn(Value value);

  /// The first communicating op `value` depends on through the ops of
  /// `scope` (a block; for an scf.for body, a carried value is followed to
  /// its start and its yield), or through a value from outside it; null if
  /// none. Walks the slice per
  /// query, so it is for a few values of a block, not every gradient.
  Operation *findThrough(Value value, Block *scope);

private:
  /// Whether `op` itself communicates (a call: whether its callee may).
  bool communicates(Operation *op, FunctionOpInterface within);
  bool mayCommunicate(FunctionOpInterface callee);
  /// The op of the function's body that `value` is defined by or in; null
  /// for the body's own arguments.
  Operation *bodyOpOf(Value value);
  void analyze();

  SymbolTableCollection &symbolTable;
  FunctionOpInterface func;
  bool analyzed = false;
  llvm::DenseMap<Operation *, Operation *> dependsOn;
  llvm::DenseMap<Operation *, bool> calleeCommunicates;
};

} // namespace mlir::dist

#endif // DIST_ANALYSIS_COMMUNICATION_H
