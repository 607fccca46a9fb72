// dist's types are written by its bytecode interface (DistBytecode.td), not
// as their text, and read back to the same IR.
// RUN: dist-opt --emit-bytecode %s | dist-opt | FileCheck %s
// RUN: dist-opt --emit-bytecode %s > %t.mlirbc
// RUN: not grep -a "future<" %t.mlirbc

dist.mesh @world shape = [2]

// CHECK-LABEL: func.func @round_trip
// CHECK: %[[F:.*]] = dist.all_reduce %{{.*}} on @world reduction = sum : tensor<8xf32>
// CHECK: dist.wait %[[F]] : !dist.future<tensor<8xf32>>
func.func @round_trip(%g: tensor<8xf32>) -> tensor<8xf32> {
  %f = dist.all_reduce %g on @world reduction = sum : tensor<8xf32>
  %r = dist.wait %f : !dist.future<tensor<8xf32>>
  return %r : tensor<8xf32>
}
