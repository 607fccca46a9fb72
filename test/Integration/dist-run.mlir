// dist-run compiles a frontend step in process (no_sync pipeline, lowering,
// JIT) and runs windows under mpirun, checking every window against
// always-sync accumulation and the runtime's statistics.
// REQUIRES: mpi
// RUN: %python %dist_src_root/examples/gen_toy.py --mode zero3 --world 2 > %t.zero3.mlir
// RUN: %mpirun -np 2 dist-run %t.zero3.mlir --windows 2 2> %t.zero3.err | FileCheck %s --check-prefix=ZERO3
// RUN: FileCheck %s --check-prefix=ZERO3-STATS < %t.zero3.err
// RUN: %python %dist_src_root/examples/gen_toy.py --mode hsdp --world 4 > %t.hsdp.mlir
// RUN: %mpirun -np 4 dist-run %t.hsdp.mlir --windows 2 --hsdp-partial 2> %t.hsdp.err | FileCheck %s --check-prefix=HSDP
// RUN: FileCheck %s --check-prefix=HSDP-STATS < %t.hsdp.err
// RUN: %mpirun -np 2 dist-run %S/Inputs/dist-run-grads-only.mlir --windows 2 2>/dev/null | FileCheck %s --check-prefix=GRADS-ONLY
// RUN: %mpirun -np 2 dist-run %S/Inputs/dist-run-stash-only.mlir --windows 2 2>/dev/null | FileCheck %s --check-prefix=STASH-ONLY
// RUN: %mpirun -np 2 dist-run %S/Inputs/dist-run-grad-reads-param.mlir --windows 2 2>/dev/null | FileCheck %s --check-prefix=READS-PARAM
// RUN: dist-run %S/Inputs/dist-run-result-twice.mlir --windows 1 2>/dev/null | FileCheck %s --check-prefix=TWICE
// RUN: not dist-run %S/Inputs/dist-run-private.mlir 2>&1 | FileCheck %s --check-prefix=PRIVATE
// RUN: not dist-run %S/Inputs/dist-run-unfinished.mlir 2>&1 | FileCheck %s --check-prefix=UNFINISHED
// RUN: not dist-run %S/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not dist-run %S/Inputs/dist-run-huge.mlir 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not dist-run %S/Inputs/dist-run-i32.mlir 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not dist-run %s --entry=nothing 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not dist-run %s 2>&1 | FileCheck %s --check-prefix=UNTIED

// Two windows of K = 4: per window the one-round window (3 no_sync steps and
// the sync step) and always-sync (4 sync steps). The pipeline buckets
// collectives (25 MiB): a sync step reduce-scatters its 4 gradients in one
// bucket: (1 + 4) x 2 = 10; every step gathers its 8 ZeRO-3 parameters in
// one bucket in the forward and one in the backward: 8 x 2 x 2 = 32.
// Checks per rank and window: 3 no_sync steps, the stash, the kept gathers
// (none here), 4 gradients. The
// statistics go to stderr, which mpirun forwards on its own channel (in no
// fixed order with stdout), so they are checked apart.
// ZERO3: window 0: result #0 tensor<1xf32> (scalar: the loss): sum over the 4 micro-batches (rank 0)
// ZERO3: window 1: result #0 tensor<1xf32> (scalar: the loss): sum over the 4 micro-batches (rank 0)
// ZERO3-STATS: all_gather 32 calls {{.*}} reduce_scatter 10 calls {{.*}} held 0 bytes peak 1376 bytes
// ZERO3: 36 passed, 0 failed

// HSDP-partial on [2, 2]: the stash holds the node-sharded gradients (688 of
// 1376 bytes); a sync step all-reduces them across nodes in one bucket:
// (1 + 4) x 2, and dist-run's own check of its files once.
// HSDP-STATS: all_reduce 11 calls {{.*}} held 0 bytes peak 688 bytes
// HSDP: 72 passed, 0 failed

// A step whose no_sync variant has no result at all (it crashed).
// GRADS-ONLY: window 1: gradient checksum
// GRADS-ONLY: 24 passed, 0 failed
// STASH-ONLY: window 1: gradient checksum
// STASH-ONLY: 24 passed, 0 failed

// PRIVATE: dist-run: @step is private: the entry point must be public

// A value returned twice, and as a view, runs (it was freed twice).
// TWICE: 6 passed, 0 failed

// g = w * x must leave the runner's w alone (it was overwritten in place).
// READS-PARAM: 24 passed, 0 failed

// UNFINISHED: dist-run-unfinished.mlir:10:8: error: -dist-lower-to-llvm did not finish: expected only llvm dialect ops, but got 'math.ipowi', which it cannot lower
// UNFINISHED: dist-run: lowering to LLVM failed

// MISSING: dist-run: cannot open {{.*}}does-not-exist.mlir
// A 4 TiB argument and result: located errors before anything is compiled
// or allocated (it died on std::bad_alloc).
// HUGE: dist-run-huge.mlir:7:17: error: dist-run: argument #1 of @step is tensor<1099511627776xf32>, 4398046511104 bytes: more than this machine's {{[0-9]+}} bytes of memory
// HUGE: dist-run-huge.mlir:6:1: error: dist-run: result #1 of @step is tensor<1099511627776xf32>, 4398046511104 bytes: more than this machine's {{[0-9]+}} bytes of memory
// HUGE-NOT: bad_alloc
// TYPE: dist-run: data argument #1 of @step is tensor<4xi32>: integer data (token ids, masks) must come from --data-npy
// ENTRY: dist-run: {{.*}} has no func.func @nothing
// UNTIED: dist-run: the no_sync pipeline made no @step_no_sync: @step returns no gradient tied to a dist.parameter
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
