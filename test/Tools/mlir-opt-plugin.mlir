// Debian's own mlir-opt, with DistPlugin.so loaded as its dialect and pass
// plugin, runs an upstream pass and the no_sync pipeline in one pipeline,
// with the output dist-opt gives.
// RUN: %plugin_env mlir-opt --load-dialect-plugin=%dist_plugin --load-pass-plugin=%dist_plugin \
// RUN:   %dist_src_root/examples/linear_fsdp.mlir \
// RUN:   --pass-pipeline='builtin.module(canonicalize,dist-no-sync-pipeline)' -o %t.plugin.mlir
// RUN: FileCheck %s --input-file=%t.plugin.mlir
// RUN: dist-opt %dist_src_root/examples/linear_fsdp.mlir \
// RUN:   --pass-pipeline='builtin.module(canonicalize,dist-no-sync-pipeline)' -o %t.dist-opt.mlir
// RUN: diff %t.plugin.mlir %t.dist-opt.mlir

// CHECK-LABEL: func.func @backward(
// CHECK:         dist.reduce_scatter
// CHECK:         dist.all_reduce
// CHECK-LABEL: func.func @backward_no_sync(
// CHECK-NOT:     dist.reduce_scatter
// CHECK-NOT:     dist.all_reduce
// CHECK:         dist.stash_grad_for_fsdp
// CHECK:         return

// The plugin carries dist and no MLIR of its own: it needs the libMLIR.so
// the host tool has loaded, takes MLIR's code from it, and defines no
// symbol of its own outside dist (MLIR's inline templates are weak and bind
// to the host's copy).
// RUN: llvm-readelf --needed-libs %dist_plugin | FileCheck %s --check-prefix=NEEDED
// NEEDED: libMLIR.so
// RUN: llvm-nm -D -C --undefined-only %dist_plugin | FileCheck %s --check-prefix=UNDEF
// UNDEF: U mlir::MLIRContext::
// RUN: llvm-nm -D -C --defined-only %dist_plugin | FileCheck %s --check-prefix=DEF
// DEF: T mlir::dist::
// RUN: llvm-nm -D -C --defined-only %dist_plugin \
// RUN:   | sed -nE '/^[0-9a-f]+ [TDBR] /{/ ((typeinfo|typeinfo name|vtable) for )?(mlir::detail::TypeIDResolver<)?mlir::dist::| __odr_asan_gen_/!p;}' \
// RUN:   | FileCheck %s --allow-empty --check-prefix=NO-MLIR
// (AddressSanitizer's ODR indicators of those symbols are dist's too.)
// NO-MLIR-NOT: {{.}}
