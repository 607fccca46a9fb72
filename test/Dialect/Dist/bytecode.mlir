// dist's types are written by its bytecode interface (DistBytecode.td), not
// as their text, and read back to the same IR.
// RUN: dist-opt --emit-bytecode %s | dist-opt | FileCheck %s
// RUN: dist-opt --emit-bytecode %s > %t.mlirbc
// RUN: not grep -a "future<" %t.mlirbc
// A corrupt file whose future holds tensor<8xtensor<?xf32>> (one byte of a
// type table changed, found by an outside tester): MLIR's reader builds the
// payload unchecked, dist's reader verifies it.
// RUN: not dist-opt %S/Inputs/future-bad-payload.mlirbc 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: invalid tensor element type: 'tensor<?xf32>'

dist.mesh @world shape = [2]

// CHECK-LABEL: func.func @round_trip
// CHECK: %[[F:.*]] = dist.all_reduce %{{.*}} on @world reduction = sum : tensor<8xf32>
// CHECK: dist.wait %[[F]] : !dist.future<tensor<8xf32>>
func.func @round_trip(%g: tensor<8xf32>) -> tensor<8xf32> {
  %f = dist.all_reduce %g on @world reduction = sum : tensor<8xf32>
  %r = dist.wait %f : !dist.future<tensor<8xf32>>
  return %r : tensor<8xf32>
}
