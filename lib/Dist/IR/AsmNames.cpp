//===- AsmNames.cpp - result names the printer gives dist ops -------------===//
//
// Printed IR names what a value is rather than numbering it: a collective's
// future is named after the collective (in DistOps.td), the value a wait
// takes from it after what was done (%gathered, %scattered, %reduced), and
// the synced, stashed and kept values after their op. The printer suffixes
// repeats (%gathered_0), so the names carry no meaning the IR depends on.
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistOps.h"

using namespace mlir;
using namespace mlir::dist;

void WaitOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  Operation *start = getFuture().getDefiningOp();
  StringRef name = "waited";
  if (isa_and_nonnull<AllGatherOp>(start))
    name = "gathered";
  else if (isa_and_nonnull<ReduceScatterOp>(start))
    name = "scattered";
  else if (isa_and_nonnull<AllReduceOp>(start))
    name = "reduced";
  setNameFn(getResult(), name);
}

void SynchronizeOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "synced");
}

void GradSyncOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "synced_grad");
}

void TakeStashOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "stash");
}

void GatherKeptOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "kept");
}

void GroupRankOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "rank");
}
