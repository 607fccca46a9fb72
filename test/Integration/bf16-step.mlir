// A bf16 step compiled ahead of time with Debian's toolchain: lowered,
// translated, compiled by clang and linked. LLVM would lower bf16
// arithmetic through compiler-rt's __truncsfbf2, which neither libgcc 12 nor
// Debian's compiler-rt provides (the step did not link); -dist-lower-to-llvm
// computes it in f32 and rounds back with integer ops. Run on 2 ranks: bf16
// arithmetic, a bf16 stash and a bf16 all-reduce, against values worked out
// by hand (all exact in bf16).
// RUN: dist-opt %s --dist-lower-to-llvm | mlir-translate --mlir-to-llvmir -o %t.ll
// RUN: %clang -O2 -Wno-override-module -c %t.ll -o %t.o
// RUN: llvm-nm %t.o | FileCheck %s --check-prefix=SYMBOLS
// SYMBOLS-NOT: bf2
// RUN: %clang %t.o -o %t.exe -L%mlir_lib_dir -lmlir_runner_utils -lmlir_c_runner_utils %dist_runtime -Wl,-rpath,%mlir_lib_dir -Wl,-rpath,%dist_lib_dir
// RUN: %mpirun -np 2 %aot_env %t.exe | FileCheck %s
// REQUIRES: mpi

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xbf16> replicated on @world

func.func private @distrt_init(i64) -> i32
func.func private @distrt_finalize() -> i32
func.func private @distrt_check(i32)
func.func private @distrt_rank() -> i64
func.func private @printMemrefF32(memref<*xf32>)

// g = 0.5 * x + 0.25 in bf16, x = (rank + 1) * [1, 2, 3, 4]
func.func @grad(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %half = arith.constant dense<0.5> : tensor<4xbf16>
  %quarter = arith.constant dense<0.25> : tensor<4xbf16>
  %m = arith.mulf %x, %half : tensor<4xbf16>
  %g = arith.addf %m, %quarter : tensor<4xbf16>
  return %g : tensor<4xbf16>
}

func.func @print(%t: tensor<4xbf16>) {
  %f = arith.extf %t : tensor<4xbf16> to tensor<4xf32>
  %m = bufferization.to_buffer %f read_only : tensor<4xf32> to memref<4xf32>
  %u = memref.cast %m : memref<4xf32> to memref<*xf32>
  func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() -> i32 {
  %c0 = arith.constant 0 : i64
  %s = call @distrt_init(%c0) : (i64) -> i32
  func.call @distrt_check(%s) : (i32) -> ()
  %rank = call @distrt_rank() : () -> i64
  %one = arith.constant 1 : i64
  %k = arith.addi %rank, %one : i64
  %kf = arith.sitofp %k : i64 to f32
  %base = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %ks = linalg.fill ins(%kf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %x32 = arith.mulf %base, %ks : tensor<4xf32>
  %x = arith.truncf %x32 : tensor<4xf32> to tensor<4xbf16>
  %g = call @grad(%x) : (tensor<4xbf16>) -> tensor<4xbf16>
  // Stashed twice and taken: 2 g.
  dist.stash_grad_for_fsdp %g for @w : tensor<4xbf16>
  dist.stash_grad_for_fsdp %g for @w : tensor<4xbf16>
  %t = dist.take_stash @w : tensor<4xbf16>
  // Sum over the ranks of 2 g: rank 0 g = [0.75, 1.25, 1.75, 2.25], rank 1
  // g = [1.25, 2.25, 3.25, 4.25]: 2 * [2, 3.5, 5, 6.5].
  %f = dist.all_reduce %t on @world reduction = sum : tensor<4xbf16>
  %r = dist.wait %f : !dist.future<tensor<4xbf16>>
  %is0 = arith.cmpi eq, %rank, %c0 : i64
  scf.if %is0 {
    func.call @print(%g) : (tensor<4xbf16>) -> ()
    func.call @print(%r) : (tensor<4xbf16>) -> ()
  }
  %fin = call @distrt_finalize() : () -> i32
  func.call @distrt_check(%fin) : (i32) -> ()
  %zero = arith.constant 0 : i32
  return %zero : i32
}
// CHECK: [0.75,  1.25,  1.75,  2.25]
// CHECK: [4,  7,  10,  13]
