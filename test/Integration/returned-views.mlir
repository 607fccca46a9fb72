// Functions returning a constant, an argument, or a slice of one, lowered by
// -dist-lower-to-llvm and run: each result is a copy with the right values
// (the pipeline used to leave bufferization.clone and memref.subview behind).
// RUN: dist-opt %s --dist-lower-to-llvm > %t.ll.mlir
// RUN: mlir-runner %t.ll.mlir -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>)
func.func @const() -> tensor<4xf32> {
  %c = arith.constant dense<1.5> : tensor<4xf32>
  return %c : tensor<4xf32>
}
func.func @slice(%x: tensor<8xf32>) -> tensor<4xf32> {
  %s = tensor.extract_slice %x[2] [4] [1] : tensor<8xf32> to tensor<4xf32>
  return %s : tensor<4xf32>
}
func.func @ident(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
func.func @show(%t: tensor<?xf32>) {
  %m = bufferization.to_buffer %t read_only : tensor<?xf32> to memref<?xf32>
  %u = memref.cast %m : memref<?xf32> to memref<*xf32>
  func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
func.func @main() {
  %x = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf32>
  %a = call @const() : () -> tensor<4xf32>
  %b = call @slice(%x) : (tensor<8xf32>) -> tensor<4xf32>
  %c = call @ident(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %a2 = tensor.cast %a : tensor<4xf32> to tensor<?xf32>
  %b2 = tensor.cast %b : tensor<4xf32> to tensor<?xf32>
  %c2 = tensor.cast %c : tensor<8xf32> to tensor<?xf32>
  call @show(%a2) : (tensor<?xf32>) -> ()
  call @show(%b2) : (tensor<?xf32>) -> ()
  call @show(%c2) : (tensor<?xf32>) -> ()
  return
}

// CHECK: [1.5,  1.5,  1.5,  1.5]
// CHECK: [2,  3,  4,  5]
// CHECK: [0,  1,  2,  3,  4,  5,  6,  7]
