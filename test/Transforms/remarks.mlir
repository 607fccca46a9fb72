// The passes report through MLIR's optimization remarks (Dist/Remarks/Remarks.h):
// a gradient stashed is a `passed` remark, a gradient left unchanged a
// `missed` one with the warning's reason, and each pass's totals one
// `analysis` remark "counts" (Debian's LLVM counts no pass statistics). The
// category is the pass's flag, so a filter selects one pass.
// RUN: dist-opt %s --dist-no-sync-pipeline --remarks-filter-passed=dist-grad-accumulation --remark-format=emitRemark -o /dev/null 2>&1 | FileCheck %s --check-prefix=PASSED --implicit-check-not="remark:"
// RUN: dist-opt %s --apply-no-sync --remarks-filter-missed=apply-no-sync --remark-format=emitRemark -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSED --implicit-check-not="remark:"
// RUN: dist-opt %s --dist-no-sync-pipeline --remarks-filter-analyse=dist-insert-grad-sync --remark-format=emitRemark -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS --implicit-check-not="remark:"
// Without a filter, nothing is reported.
// RUN: dist-opt %s --dist-no-sync-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE --allow-empty --implicit-check-not="remark:"
// YAML for tools that collect remarks.
// RUN: dist-opt %s --dist-no-sync-pipeline --remarks-filter=dist-grad-accumulation --remark-format=yaml --remarks-output-file=%t.yaml -o /dev/null
// RUN: FileCheck %s --check-prefix=YAML < %t.yaml

// NONE-NOT: remark:

dist.mesh @world shape = [2]
dist.parameter @w : tensor<2x3xf32> fully_sharded on @world
dist.parameter @b : tensor<3xf32> replicated on @world

// PASSED: remarks.mlir:[[# @LINE + 4]]:9: remark: [Passed] stashed | Category:dist-grad-accumulation | Function=backward_no_sync | Remark="the gradient of @w skips its sync in @backward_no_sync and is stashed"
// PASSED: remarks.mlir:[[# @LINE + 4]]:9: remark: [Passed] stashed | Category:dist-grad-accumulation | Function=backward_no_sync | Remark="the gradient of @b skips its sync in @backward_no_sync and is stashed"
func.func @backward(%x: tensor<4x3xf32>, %y: tensor<3xf32>)
    -> (tensor<4x3xf32> {dist.grad = @w}, tensor<3xf32> {dist.grad = @b}) {
  %gw = arith.mulf %x, %x : tensor<4x3xf32>
  %gb = arith.mulf %y, %y : tensor<3xf32>
  return %gw, %gb : tensor<4x3xf32>, tensor<3xf32>
}
// A pass's counts are about the module, which the parser places at file:0:0:
// they are shown at the file's first line (issue 37).
// COUNTS: remarks.mlir:1:1: remark: [Analysis] counts | Category:dist-insert-grad-sync | synced=2
// Before -dist-insert-grad-sync, the gradients are local: apply-no-sync leaves
// them, with a warning and a missed remark each.
// MISSED: remarks.mlir:[[# @LINE - 9]]:9: remark: [Missed] not-rewritten | Category:apply-no-sync | Function=backward | Reason="result #0 of @backward, the gradient of @w, is not synchronized: there is no sync to skip (run -dist-insert-grad-sync first); left unchanged"
// MISSED: remarks.mlir:[[# @LINE - 9]]:9: remark: [Missed] not-rewritten | Category:apply-no-sync | Function=backward | Reason="result #1 of @backward, the gradient of @b, is not synchronized: there is no sync to skip (run -dist-insert-grad-sync first); left unchanged"

// YAML: --- !Passed
// YAML: Pass: dist-grad-accumulation
// YAML: Name: stashed
// YAML: Function: backward_no_sync
// YAML: the gradient of @w skips its sync in @backward_no_sync and is stashed
