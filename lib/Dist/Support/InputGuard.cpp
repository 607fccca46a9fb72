//===- InputGuard.cpp - reject input the MLIR parser cannot survive -------===//

#include "Dist/Support/InputGuard.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

using namespace llvm;

namespace {
/// Whether `buffer` is MLIR bytecode: its magic number, as mlir::isBytecode
/// tests it (linking MLIR's bytecode reader here put a second copy of
/// MLIRIR beside the MLIR dylib, which ASan caught).
bool isBytecode(MemoryBufferRef buffer) {
  return buffer.getBuffer().starts_with("ML\xefR");
}

/// Prints "file:line:col: error: message" for `at` in `buffer`.
void report(MemoryBufferRef buffer, const char *at, const Twine &message) {
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      MemoryBuffer::getMemBuffer(buffer, /*RequiresNullTerminator=*/false),
      SMLoc());
  sourceMgr.PrintMessage(errs(), SMLoc::getFromPointer(at), SourceMgr::DK_Error,
                         message);
}

/// A character of a bare identifier or keyword (MLIR's lexer: letters,
/// digits, `_`, `$`, `.`).
bool isIdChar(char c) { return isAlnum(c) || c == '_' || c == '$' || c == '.'; }

/// Past the whitespace and `//` comments at `i`.
size_t skipTrivia(StringRef text, size_t i) {
  while (i < text.size()) {
    if (isSpace(text[i]))
      ++i;
    else if (text.substr(i).starts_with("//"))
      while (i < text.size() && text[i] != '\n')
        ++i;
    else
      break;
  }
  return i;
}

/// The end of one DenseI64ArrayAttr element at `i` (true, false, or an
/// optionally negated decimal or hex integer that fits in int64), or npos;
/// `tooLarge` says an integer was found but does not fit.
size_t elementEnd(StringRef text, size_t i, bool &tooLarge) {
  size_t end = i;
  while (end < text.size() && isIdChar(text[end]))
    ++end;
  StringRef word = text.slice(i, end);
  if (word == "true" || word == "false")
    return end;
  bool negative = i < text.size() && text[i] == '-';
  if (negative)
    i = skipTrivia(text, i + 1);
  unsigned radix = 10;
  size_t digits = i;
  if (text.substr(i).starts_with("0x") && i + 2 < text.size() &&
      isHexDigit(text[i + 2])) {
    radix = 16;
    digits = i + 2;
  }
  end = digits;
  while (end < text.size() &&
         (radix == 16 ? isHexDigit(text[end]) : isDigit(text[end])))
    ++end;
  // `1.0`, `1e3`, `1x`: the lexer reads more than one token, or a float.
  if (end == digits || (end < text.size() && isIdChar(text[end])))
    return StringRef::npos;
  uint64_t value = 0;
  tooLarge = text.slice(digits, end).getAsInteger(radix, value) ||
             value > uint64_t(INT64_MAX) + (negative ? 1 : 0);
  return tooLarge ? StringRef::npos : end;
}

/// The first token of the value after `key =` (from `i`, past the `=`) that
/// does not continue `[` int64 integers `]`, or npos.
size_t badListToken(StringRef text, size_t i, bool &tooLarge) {
  i = skipTrivia(text, i);
  if (i >= text.size() || text[i] != '[')
    return i;
  i = skipTrivia(text, i + 1);
  if (i < text.size() && text[i] == ']')
    return StringRef::npos;
  for (;;) {
    size_t end = elementEnd(text, i, tooLarge);
    if (end == StringRef::npos)
      return i;
    i = skipTrivia(text, end);
    if (i < text.size() && text[i] == ']')
      return StringRef::npos;
    if (i >= text.size() || text[i] != ',')
      return i;
    i = skipTrivia(text, i + 1);
  }
}
} // namespace

const char *mlir::dist::findExcessiveNesting(StringRef text, unsigned limit) {
  unsigned depth = 0;
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    char c = text[i];
    char next = i + 1 < n ? text[i + 1] : '\0';
    if (c == '"') { // a string: up to the unescaped closing quote
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '/' && next == '/') { // a comment: to the end of the line
      while (i < n && text[i] != '\n')
        ++i;
      continue;
    }
    bool opens = c == '(' || c == '[' || c == '{' || (c == '<' && next != '=');
    bool closes = c == ')' || c == ']' || c == '}' ||
                  (c == '>' && next != '=' && (i == 0 || text[i - 1] != '-'));
    if (opens && ++depth > limit)
      return text.data() + i;
    if (closes && depth)
      --depth;
  }
  return nullptr;
}

const char *mlir::dist::findUnparsable(MemoryBufferRef buffer,
                                       unsigned limit, std::string &message) {
  // Bytecode is not read by the recursive text parser (its bytes are no
  // brackets: an i8 array of 40s read as 256 nested `(`).
  if (isBytecode(buffer))
    return nullptr;
  if (const char *at = findExcessiveNesting(buffer.getBuffer(), limit)) {
    message = ("brackets nest deeper than " + Twine(limit) +
               " levels; the MLIR parser recurses once per level and would "
               "overflow its stack")
                  .str();
    return at;
  }
  return findParserCrash(buffer.getBuffer(), &message);
}

bool mlir::dist::checkNesting(MemoryBufferRef buffer, unsigned limit) {
  if (isBytecode(buffer))
    return true;
  const char *at = findExcessiveNesting(buffer.getBuffer(), limit);
  if (!at)
    return true;
  std::string message;
  findUnparsable(buffer, limit, message);
  report(buffer, at, message + " (see --dist-max-nesting)");
  return false;
}

const char *mlir::dist::findParserCrash(StringRef text, std::string *message) {
  // The last significant character before the current token: a key after
  // `{` or `,` is an attribute dictionary's entry, not linalg's syntax.
  char last = '\0';
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    char c = text[i];
    if (c == '"') { // a string: up to the unescaped closing quote
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      last = '"';
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '/') { // a comment
      while (i < n && text[i] != '\n')
        ++i;
      continue;
    }
    if (isSpace(c))
      continue;
    if (c == '-' && !(i + 1 < n && text[i + 1] == '>')) {
      // A run of minus signs: the affine parser recurses once per unary
      // minus, with no brackets for the nesting check to count.
      size_t run = 0, j = i;
      while (j < n && text[j] == '-' && !(j + 1 < n && text[j + 1] == '>')) {
        ++run;
        j = skipTrivia(text, j + 1);
      }
      if (run > kMaxMinusRun) {
        if (message)
          *message = ("expected at most " + Twine(kMaxMinusRun) +
                      " consecutive '-', but got " + Twine(run) +
                      " (the affine parser recurses once per '-')")
                         .str();
        return text.data() + i;
      }
      last = '-';
      i = j - 1;
      continue;
    }
    if (!isIdChar(c)) {
      last = c;
      continue;
    }
    // A word; after @ % # ! ^ it is a symbol, value, alias or block name.
    size_t end = i;
    while (end < n && isIdChar(text[end]))
      ++end;
    StringRef word = text.slice(i, end);
    bool named = i > 0 && StringRef("@%#!^").contains(text[i - 1]);
    size_t eq = skipTrivia(text, end);
    if (!named && word == "array" && eq < n && text[eq] == '<') {
      size_t type = skipTrivia(text, eq + 1), typeEnd = type;
      while (typeEnd < n && isIdChar(text[typeEnd]))
        ++typeEnd;
      if (text.slice(type, typeEnd) == "index") {
        if (message)
          *message = "expected an integer or float element type after "
                     "'array<', not 'index' "
                     "(MLIR 22's parser crashes on it)";
        return text.data() + type;
      }
    }
    if (!named && (word == "dimensions" || word == "permutation") &&
        last != '{' && last != ',' && eq < n && text[eq] == '=') {
      bool tooLarge = false;
      size_t bad = badListToken(text, eq + 1, tooLarge);
      if (bad != StringRef::npos) {
        if (message)
          *message =
              tooLarge
                  ? ("integer does not fit in 64 bits in the list after '" +
                     word + " =' (MLIR 22's parser crashes on it)")
                        .str()
                  : ("expected '[' followed by integers and ']' after '" +
                     word + " =' (MLIR 22's parser crashes on anything else)")
                        .str();
        return text.data() + bad;
      }
    }
    last = 'a';
    i = end - 1;
  }
  return nullptr;
}

bool mlir::dist::checkParserCrashes(MemoryBufferRef buffer) {
  if (isBytecode(buffer))
    return true; // The text parser's crashes; bytecode has its own reader.
  std::string message;
  const char *at = findParserCrash(buffer.getBuffer(), &message);
  if (!at)
    return true;
  report(buffer, at, message);
  return false;
}
