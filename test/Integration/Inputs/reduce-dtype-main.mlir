  // Appended into the module the no_sync pipeline wrote (reduce-dtype.mlir):
  // one window, micro-batches 1..7 no_sync, the 8th the sync step.
  func.func private @distrt_init(i64) -> i32
  func.func private @distrt_finalize() -> i32
  func.func private @distrt_check(i32)
  func.func private @distrt_rank() -> i64
  func.func private @printMemrefF32(memref<*xf32>)
  func.func private @printString(!llvm.ptr)
  llvm.mlir.global internal constant @f32_label("f32 stash: \00")
  llvm.mlir.global internal constant @bf16_label("bf16 stash: \00")
  func.func @show(%label: !llvm.ptr, %t: tensor<4xbf16>) {
    call @printString(%label) : (!llvm.ptr) -> ()
    %f = arith.extf %t : tensor<4xbf16> to tensor<4xf32>
    %m = bufferization.to_buffer %f read_only : tensor<4xf32> to memref<4xf32>
    %u = memref.cast %m : memref<4xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    return
  }
  func.func @main() {
    %c0 = arith.constant 0 : i64
    %s = call @distrt_init(%c0) : (i64) -> i32
    call @distrt_check(%s) : (i32) -> ()
    %one = arith.constant dense<1.0> : tensor<4xbf16>
    %x = arith.constant dense<1.015625> : tensor<4xbf16>
    %lo = arith.constant 0 : index
    %hi = arith.constant 7 : index
    %step = arith.constant 1 : index
    scf.for %k = %lo to %hi step %step {
      func.call @step_no_sync(%one, %one, %x) : (tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> ()
    }
    %g:2 = call @step(%one, %one, %x) : (tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>)
    %rank = call @distrt_rank() : () -> i64
    %is0 = arith.cmpi eq, %rank, %c0 : i64
    scf.if %is0 {
      %la = llvm.mlir.addressof @f32_label : !llvm.ptr
      %lb = llvm.mlir.addressof @bf16_label : !llvm.ptr
      func.call @show(%la, %g#0) : (!llvm.ptr, tensor<4xbf16>) -> ()
      func.call @show(%lb, %g#1) : (!llvm.ptr, tensor<4xbf16>) -> ()
    }
    %f = call @distrt_finalize() : () -> i32
    call @distrt_check(%f) : (i32) -> ()
    return
  }
}
