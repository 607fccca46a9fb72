//===- InputGuard.h - reject input the MLIR parser cannot survive -*- C++
//-*-===//
//
// Some input crashes MLIR 22's own parser (mlir-opt-22 too), so the tools
// check for it before parsing and answer with a located error:
//
// - Deep nesting. The parser is recursive descent with no depth limit:
//   19,000 nested parentheses in a type overflow the stack of mlir-opt
//   22.1.8 (found by fuzz/dist-fuzz; test/Tools/deep-nesting.mlir). The
//   tools check the bracket nesting first, like clang's -fbracket-depth (256).
// - A malformed `dimensions =` / `permutation =` list in the custom syntax of
//   linalg.reduce, linalg.broadcast and linalg.transpose. Their parsers store
//   what DenseI64ArrayAttr::parse returns without checking it, and it returns
//   a null attribute on anything but `[` int64 integers `]` (SIGSEGV in
//   NamedAttrList::set; found by fuzz/dist-fuzz;
//   test/Tools/linalg-int-lists.mlir).
// - A dense array of `index` (`array<index: 1>`): the parser asks index for
//   its float width (SIGSEGV in FloatType::getWidth; found by
//   fuzz/dist-fuzz-mutate; test/Tools/dense-array-index.mlir).
//
// - A long run of unary minus in an affine expression (`-----d0`): the
//   affine parser recurses once per `-`, about 1.1 KB of stack each, and
//   7,500 overflow an 8 MB stack though the brackets nest twice.
//
// The tools parse on a stack of kParserStackBytes (runWithParserStack), so
// these limits stay far from an overflow also on paths no check knows.
//
// These are the text parser's; MLIR bytecode (its magic number) is not
// checked: its bytes are no syntax (an i8 array of 40s looked like 256
// nested parentheses; test/Tools/bytecode-input.mlir).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_SUPPORT_INPUTGUARD_H
#define DIST_SUPPORT_INPUTGUARD_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBufferRef.h"
#include "llvm/Support/ProgramStack.h"

#include <optional>

#include <string>

namespace mlir::dist {

/// The default limit: far beyond any real IR, far below a stack overflow.
constexpr unsigned kDefaultMaxNesting = 256;

/// The most consecutive `-` (whitespace between them allowed, `->` not
/// counted) accepted: about 72 MB of the parser's stack.
constexpr unsigned kMaxMinusRun = 65536;

/// The stack the tools parse on: virtual memory, touched only as deep as the
/// parser goes.
constexpr unsigned kParserStackBytes = 512u << 20;

/// Runs `fn` on a new stack of kParserStackBytes and returns its result.
/// Under AddressSanitizer, on the calling thread instead: ASan 22 fails to
/// unmap its own state of a 512 MB-stack thread that started others ("failed
/// to deallocate ... (error code: 22)" at its exit), so the sanitizer tests
/// give the main thread a large stack limit (prlimit) instead.
template <typename Fn> auto runWithParserStack(Fn &&fn) {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  return fn();
#endif
#endif
  using Result = decltype(fn());
  std::optional<Result> result;
  llvm::runOnNewStack(kParserStackBytes, [&] { result.emplace(fn()); });
  return std::move(*result);
}

/// The first bracket ( [ { < that opens nesting level `limit` + 1 in `text`,
/// or nullptr. Strings and `//` comments are skipped; `->`, `>=` and `<=`
/// are not brackets.
const char *findExcessiveNesting(llvm::StringRef text, unsigned limit);

/// The first place in `buffer` the text parser would not survive: nesting
/// deeper than `limit`, else findParserCrash's token; `message` gets the
/// error. nullptr for safe text and for MLIR bytecode (its own reader).
const char *findUnparsable(llvm::MemoryBufferRef buffer, unsigned limit,
                           std::string &message);

/// Prints "file:line:col: error: ..." to stderr and returns false if `buffer`
/// nests deeper than `limit`.
bool checkNesting(llvm::MemoryBufferRef buffer,
                  unsigned limit = kDefaultMaxNesting);

/// The first token of `text` that MLIR 22's parser would crash on, other
/// than nesting, or nullptr; strings and `//` comments are skipped:
/// - in a `dimensions =` or `permutation =` (whole words, outside attribute
///   dictionaries, where the generic attribute parser reports errors
///   itself), the first token that does not continue a list `[` int64
///   integers (decimal or hex, or true/false) `]`;
/// - `index` as the element type of `array<...>`;
/// - more than kMaxMinusRun consecutive `-`.
/// When one is found and `message` is given, it gets the error to print.
const char *findParserCrash(llvm::StringRef text,
                            std::string *message = nullptr);

/// Prints "file:line:col: error: ..." to stderr and returns false if
/// `buffer` holds what findParserCrash finds.
bool checkParserCrashes(llvm::MemoryBufferRef buffer);

} // namespace mlir::dist

#endif // DIST_SUPPORT_INPUTGUARD_H
