//===- InputGuard.cpp - reject input the MLIR parser cannot survive -------===//

#include "Dist/Support/InputGuard.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

const char *mlir::dist::findExcessiveNesting(StringRef text, unsigned limit) {
  unsigned depth = 0;
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    char c = text[i];
    char next = i + 1 < n ? text[i + 1] : '\0';
    if (c == '"') { // a string: up to the unescaped closing quote
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      continue;
    }
    if (c == '/' && next == '/') { // a comment: to the end of the line
      while (i < n && text[i] != '\n') ++i;
      continue;
    }
    bool opens = c == '(' || c == '[' || c == '{' || (c == '<' && next != '=');
    bool closes = c == ')' || c == ']' || c == '}' ||
                  (c == '>' && next != '=' && (i == 0 || text[i - 1] != '-'));
    if (opens && ++depth > limit) return text.data() + i;
    if (closes && depth) --depth;
  }
  return nullptr;
}

bool mlir::dist::checkNesting(MemoryBufferRef buffer, unsigned limit) {
  const char *at = findExcessiveNesting(buffer.getBuffer(), limit);
  if (!at) return true;
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(MemoryBuffer::getMemBuffer(buffer, /*RequiresNullTerminator=*/false),
                               SMLoc());
  sourceMgr.PrintMessage(errs(), SMLoc::getFromPointer(at), SourceMgr::DK_Error,
                         "brackets nest deeper than " + Twine(limit) +
                             " levels; the MLIR parser recurses once per level and would "
                             "overflow its stack (see --dist-max-nesting)");
  return false;
}
