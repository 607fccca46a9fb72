// The passes that only look inside a function run on any op, so a pipeline
// nests them under func.func and MLIR runs the functions in parallel
// (issue 37, item 9). Run on each function, with or without threads, they
// give what they give on the whole module.
// RUN: dist-opt %s -dist-schedule-collectives -o %t.module.mlir
// RUN: dist-opt %s --pass-pipeline='builtin.module(func.func(dist-schedule-collectives))' -o %t.func.mlir
// RUN: dist-opt %s --pass-pipeline='builtin.module(func.func(dist-schedule-collectives))' -mlir-disable-threading -o %t.serial.mlir
// RUN: diff %t.module.mlir %t.func.mlir
// RUN: diff %t.module.mlir %t.serial.mlir
// RUN: FileCheck %s --input-file=%t.func.mlir
// The lowering's own steps likewise.
// RUN: dist-opt %s --pass-pipeline='builtin.module(func.func(dist-fuse-elementwise-keep-contractions, dist-scf-to-cf-last-first, dist-keep-float-rounding))' -o /dev/null
// The pipelines nest them: each dump after the pass is one function, never
// the module.
// RUN: dist-opt %s --dist-no-sync-pipeline=schedule=true -mlir-print-ir-after=dist-schedule-collectives -o /dev/null 2>&1 \
// RUN:   | grep -A1 "IR Dump After DistScheduleCollectivesPass" | FileCheck %s --check-prefix=NESTED
// RUN: dist-opt %s --dist-lower-to-llvm -mlir-print-ir-after=dist-keep-float-rounding -o /dev/null 2>&1 \
// RUN:   | grep -A1 "IR Dump After DistKeepFloatRoundingPass" | FileCheck %s --check-prefix=NESTED
// NESTED-NOT: module
// NESTED-DAG: func.func @first(
// NESTED-DAG: func.func @second(
// NESTED-NOT: module

dist.mesh @w shape = [2]

// Each function's collective is issued before the compute that does not
// feed it; its wait sinks to its reader.
// CHECK-LABEL: func.func @first
// CHECK: %[[A:.*]] = arith.mulf %arg0, %arg0
// CHECK-NEXT: %[[F:.*]] = dist.all_reduce %[[A]]
// CHECK-NEXT: arith.addf
// CHECK-NEXT: dist.wait %[[F]]
func.func @first(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %a = arith.mulf %x, %x : tensor<4xf32>
  %b = arith.addf %y, %y : tensor<4xf32>
  %f = dist.all_reduce %a on @w reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  %d = arith.mulf %b, %r : tensor<4xf32>
  return %d : tensor<4xf32>
}

// CHECK-LABEL: func.func @second
// CHECK: %[[A:.*]] = arith.subf %arg0, %arg0
// CHECK-NEXT: %[[F:.*]] = dist.all_reduce %[[A]]
// CHECK-NEXT: arith.addf
// CHECK-NEXT: dist.wait %[[F]]
func.func @second(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %a = arith.subf %x, %x : tensor<4xf32>
  %b = arith.addf %y, %y : tensor<4xf32>
  %f = dist.all_reduce %a on @w reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  %d = arith.mulf %b, %r : tensor<4xf32>
  return %d : tensor<4xf32>
}
