// dist in a pipeline written as a transform script (issue 37, item 8): the
// no_sync pipeline and its options through upstream's
// transform.apply_registered_pass, the same output as the pass pipeline,
// and its errors at their locations.
// RUN: dist-opt %dist_src_root/examples/toy/toy_zero3_w2.mlir --transform-preload-library=transform-library-paths=%S/Inputs/no-sync-transform.mlir --transform-interpreter -o %t.transform.mlir
// RUN: dist-opt %dist_src_root/examples/toy/toy_zero3_w2.mlir --dist-no-sync-pipeline=keep-gathered=true -o %t.pipeline.mlir
// RUN: diff %t.transform.mlir %t.pipeline.mlir
// RUN: FileCheck %s < %t.transform.mlir
// RUN: not dist-opt %dist_src_root/examples/toy/toy_zero3_w2.mlir --transform-preload-library=transform-library-paths=%S/Inputs/no-sync-transform.mlir --transform-interpreter=entry-point=too_small 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not dist-opt %dist_src_root/examples/toy/toy_zero3_w2.mlir --transform-preload-library=transform-library-paths=%S/Inputs/no-sync-transform.mlir --transform-interpreter=entry-point=on_function 2>&1 | FileCheck %s --check-prefix=FUNC

// CHECK: func.func @step(
// CHECK: dist.gather_kept
// CHECK: func.func @step_no_sync(
// BUDGET: toy_zero3_w2.mlir:{{[0-9]+}}:{{[0-9]+}}: error: dist-choose-stash: expected a budget of at least
// BUDGET: no-sync-transform.mlir:{{[0-9]+}}:{{[0-9]+}}: error: pass pipeline failed
// FUNC: toy_zero3_w2.mlir:{{[0-9]+}}:1: error: 'func.func' op trying to schedule pass 'ApplyNoSyncPass' on an unsupported operation
