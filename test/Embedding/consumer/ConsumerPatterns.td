// A downstream DRR pattern on dist's installed ODS (issue 37, item 8): the
// max over a group of values that an all_reduce(max) on the same group made
// equal on every rank is that max, so the outer collective reduces the
// original input instead, and the inner one is left to its other users.
include "mlir/IR/PatternBase.td"
include "Dist/IR/DistOps.td"

def IsMaxReduction : AttrConstraint<
    CPred<"::llvm::cast<::mlir::dist::ReductionKindAttr>($_self).getValue() "
          "== ::mlir::dist::ReductionKind::Max">, "max reduction">;

def SameAttr : Constraint<CPred<"$0 == $1">, "the same attribute">;

def MaxOfAllReducedMax : Pat<
    (Dist_AllReduceOp (Dist_WaitOp (Dist_AllReduceOp $x, $innerMesh,
                                    $innerAxes, IsMaxReduction:$inner)),
                      $mesh, $axes, IsMaxReduction:$outer),
    (Dist_AllReduceOp $x, $mesh, $axes, $outer),
    [(SameAttr $mesh, $innerMesh), (SameAttr $axes, $innerAxes)]>;
