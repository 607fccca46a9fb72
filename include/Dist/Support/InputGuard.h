//===- InputGuard.h - reject input the MLIR parser cannot survive -*- C++ -*-===//
//
// MLIR's parser is recursive descent with no depth limit: 19,000 nested
// parentheses in a type overflow the stack of mlir-opt 22.1.8 (found by
// fuzz/dist-fuzz; test/Tools/deep-nesting.mlir). The tools check the
// bracket nesting of their input first, like clang's -fbracket-depth (256).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_SUPPORT_INPUTGUARD_H
#define DIST_SUPPORT_INPUTGUARD_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBufferRef.h"

namespace mlir::dist {

/// The default limit: far beyond any real IR, far below a stack overflow.
constexpr unsigned kDefaultMaxNesting = 256;

/// The first bracket ( [ { < that opens nesting level `limit` + 1 in `text`,
/// or nullptr. Strings and `//` comments are skipped; `->`, `>=` and `<=`
/// are not brackets.
const char *findExcessiveNesting(llvm::StringRef text, unsigned limit);

/// Prints "file:line:col: error: ..." to stderr and returns false if `buffer`
/// nests deeper than `limit`.
bool checkNesting(llvm::MemoryBufferRef buffer, unsigned limit = kDefaultMaxNesting);

} // namespace mlir::dist

#endif // DIST_SUPPORT_INPUTGUARD_H
