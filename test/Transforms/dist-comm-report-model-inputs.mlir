// The comm report's JSON carries what the performance model reads off the
// module (bench/perf_model.py): each parameter's bytes, each stash's point
// and bytes, and each function's floating-point operations per call,
// counted from its linalg ops (Dist/Analysis/Flops.h). Worked by hand below.
// RUN: dist-opt %s -dist-comm-report=format=json -o /dev/null | FileCheck %s

// CHECK: "flops_per_call": {
// 2x3 times 3x4 (multiply and add per point): 2 * 2*3*4 = 48; an add over
// 2x4: 8; a multiply over 4, three times in a loop: 12; a fused
// multiply-add over 5: 10; the extf over 5 counts nothing. 48+8+12+10 = 78.
// CHECK-DAG: "compute": 78,
// A dynamic loop range: not static.
// CHECK-DAG: "dynamic": null,
// A loop without a constant trip count: not static.
// CHECK-DAG: "unknown_trips": null
// CHECK: },
// CHECK: "parameters": [
// CHECK-NEXT: {
// CHECK-NEXT: "elements": 32,
// CHECK-NEXT: "local_bytes": 64,
// CHECK-NEXT: "local_type": "tensor<4x4xf32>",
// CHECK-NEXT: "parameter": "w",
// CHECK-NEXT: "unsharded_bytes": 128
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "elements": 6,
// CHECK-NEXT: "local_bytes": 12,
// CHECK-NEXT: "local_type": "tensor<6xbf16>",
// CHECK-NEXT: "parameter": "b",
// CHECK-NEXT: "unsharded_bytes": 12
// CHECK-NEXT: }
// CHECK-NEXT: ],
// CHECK: "stashes": [
// CHECK-NEXT: {
// CHECK-NEXT: "bytes": 128,
// CHECK-NEXT: "parameter": "w",
// CHECK-NEXT: "point": "local",
// CHECK-NEXT: "type": "tensor<8x4xf32>"
// CHECK-NEXT: }
// CHECK-NEXT: ],

dist.mesh @m shape = [2]
dist.parameter @w : tensor<4x4xf32> fully_sharded on @m
dist.parameter @b : tensor<6xbf16> replicated on @m

#id = affine_map<(i) -> (i)>
func.func @compute(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>,
                   %c: tensor<2x4xf32>, %v: tensor<4xf32>,
                   %x: tensor<5xf32>, %h: tensor<5xbf16>) -> tensor<4xf32> {
  %mm = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>)
                      outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
  %add = linalg.add ins(%mm, %c : tensor<2x4xf32>, tensor<2x4xf32>)
                    outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %v) -> tensor<4xf32> {
    %m = linalg.mul ins(%acc, %v : tensor<4xf32>, tensor<4xf32>)
                    outs(%acc : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %m : tensor<4xf32>
  }
  %fma = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<5xf32>) outs(%x : tensor<5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %f = math.fma %in, %in, %out : f32
    linalg.yield %f : f32
  } -> tensor<5xf32>
  %ext = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%h : tensor<5xbf16>) outs(%x : tensor<5xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<5xf32>
  return %r : tensor<4xf32>
}

func.func @dynamic(%a: tensor<?xf32>) -> tensor<?xf32> {
  %s = linalg.add ins(%a, %a : tensor<?xf32>, tensor<?xf32>)
                  outs(%a : tensor<?xf32>) -> tensor<?xf32>
  return %s : tensor<?xf32>
}

func.func @unknown_trips(%v: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %v) -> tensor<4xf32> {
    %m = linalg.mul ins(%acc, %v : tensor<4xf32>, tensor<4xf32>)
                    outs(%acc : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %m : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

func.func @step(%g: tensor<8x4xf32>) {
  dist.stash_grad_for_fsdp %g for @w : tensor<8x4xf32>
  return
}

