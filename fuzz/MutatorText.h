//===- MutatorText.h - text scanners for the dist mutator -------*- C++ -*-===//
//
// The small hand-written scanners the mutator's edits find tokens with
// (symbols, SSA names, tensor types, whole words), the values they write
// (integers near or past the int32/int64 limits, element types, keywords)
// and the random draws they share. Plain text, no MLIR and no std::regex
// (libstdc++'s recursion depth grows with the match length, and the byte
// mutator writes long runs).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_FUZZ_MUTATORTEXT_H
#define DIST_FUZZ_MUTATORTEXT_H

#include <cctype>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

namespace dist_fuzz::text {

using Rng = std::mt19937_64;

/// A uniform draw in [0, n), or 0 when n is 0.
inline size_t below(Rng &rng, size_t n) {
  return n ? std::uniform_int_distribution<size_t>(0, n - 1)(rng) : 0;
}
inline bool oneIn(Rng &rng, size_t n) { return below(rng, n) == 0; }
template <typename T> const T &pickFrom(Rng &rng, const std::vector<T> &v) {
  return v[below(rng, v.size())];
}

/// Element types an edit may write, from the common to the exotic.
extern const std::vector<std::string> kElementTypes;
/// Large integers: past int32 and uint32, near and past int64, past uint64.
extern const std::vector<std::string> kHugeInts;
/// The dialect's keyword sets: reductions, parameter/synchronize kinds,
/// grad_sync phases.
extern const std::vector<std::vector<std::string>> kKeywordSets;

inline bool isIdent(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '$' || c == '-';
}
inline bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

size_t skipSpaces(const std::string &s, size_t i);

/// The end of a symbol (`@name` or `@"any"`) starting at `i`, or npos.
size_t symbolEnd(const std::string &s, size_t i);

/// The end of an SSA name (`%name`) starting at `i`, or npos.
size_t ssaEnd(const std::string &s, size_t i);

/// The end of the type `tensor<...>` starting at `i` (past its closing
/// `>`), or npos.
size_t tensorEnd(const std::string &s, size_t i);

struct Span {
  size_t pos, len;
};

/// Every `tensor<...>` type in `s`.
std::vector<Span> tensorTypes(const std::string &s);

/// Whole-word occurrences of `word` (not part of a longer name, a symbol or
/// an SSA value).
std::vector<size_t> wordsOf(const std::string &s, const std::string &word);

/// Element-type occurrences of `type`: like wordsOf, but `4xf32` counts.
std::vector<size_t> elementTypesOf(const std::string &s,
                                   const std::string &type);

void replaceAll(std::string &s, const std::string &from, const std::string &to);

/// A new integer near `old`, a small one, or one past int32/int64.
std::string mutateInt(Rng &rng, const std::string &old, bool negative);

std::string join(const std::vector<std::string> &parts, const char *sep);

/// `tensor<4x?x8xf32, #enc>` as its dims and the rest (`f32, #enc`).
struct TensorParts {
  std::vector<std::string> dims;
  std::string rest;
  bool parse(const std::string &type);
  std::string str() const;
};

/// The type with dim 0 scaled as a gather (times 2) or scatter (over 2)
/// over a group of two would scale it.
std::string scaleDim0(const std::string &type, bool gather);

/// Symbols declared by `dist.mesh` or `dist.parameter`.
std::vector<std::string> declared(const std::string &s, const char *op);

/// One of `names`, or (always when there is none, else one time in 8) an
/// undeclared symbol.
std::string someSymbol(Rng &rng, const std::vector<std::string> &names);

/// Up to `maxLen` integers in [0, maxValue], comma-separated.
std::string smallIntList(Rng &rng, size_t maxLen, size_t maxValue);

/// A tensor type spelled in `s`, or (always when there is none, else one
/// time in 6) a new small one.
std::string someTensorType(const std::string &s, Rng &rng);

} // namespace dist_fuzz::text

#endif // DIST_FUZZ_MUTATORTEXT_H
