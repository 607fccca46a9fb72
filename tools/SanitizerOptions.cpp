//===- SanitizerOptions.cpp - ASan defaults of dist's executables ---------===//
//
// The dist libraries are built with ASan, libMLIR.so is not, and both
// allocate from the same llvm::BumpPtrAllocator slabs (a type's storage
// uniquer): our inline copy of the allocator poisons a fresh slab and
// unpoisons only what it hands out, MLIR's copy hands out the rest without
// unpoisoning, and ASan then reports MLIR's own writes there
// (use-after-poison in RankedTensorType::get). Manual poisoning is
// therefore off; every other ASan check stays on. Linked into every
// executable of a sanitizer build (CMakeLists.txt) and of the fuzz targets;
// ASAN_OPTIONS still overrides it key by key.
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}
