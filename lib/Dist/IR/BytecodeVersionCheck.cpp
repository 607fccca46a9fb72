//===- BytecodeVersionCheck.cpp - dist's version in a bytecode file -------===//
//
// MLIR hands a dialect its version only when the file has one. A file
// written by a dist from before dist's bytecode version 1 carries none, and
// MLIR decodes its dist ops with this build's encoding: it misreads them
// ("expected mlir::TypeAttr, but got: array<i64: 0>"), and where the old
// and new encodings happen to type-check, it would read other values than
// were written. So the tools read the container's header, string section
// and dialect section (mlir/Bytecode/Encoding.h; docs/BytecodeFormat in
// upstream MLIR) before MLIR reads the file, and refuse a file whose dist
// entry has no version, or a newer one, naming who wrote what.
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistDialect.h"

#include "mlir/Bytecode/Encoding.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;
using namespace mlir::dist;

namespace {
/// A bounds-checked cursor over bytecode's varints, bytes and sections; any
/// read past the end fails, so a truncated file is only "not scanned".
/// Positions count from the file's first byte, as section alignment does
/// (MLIR's reader requires the buffer itself to be aligned).
class Cursor {
public:
  Cursor(llvm::StringRef file, size_t begin, size_t end)
      : file(file), pos(begin), end(end) {}
  explicit Cursor(llvm::StringRef file) : Cursor(file, 0, file.size()) {}

  bool empty() const { return pos == end; }

  bool byte(uint8_t &value) {
    if (pos == end)
      return false;
    value = static_cast<uint8_t>(file[pos++]);
    return true;
  }

  /// The next `size` bytes, as a cursor of their own.
  bool bytes(uint64_t size, Cursor &result) {
    if (size > end - pos)
      return false;
    result = Cursor(file, pos, pos + size);
    pos += size;
    return true;
  }

  /// MLIR's varint: the first byte's trailing zeros count the bytes that
  /// follow (eight when the first byte is 0, which then holds no bits); the
  /// value is the rest, little-endian.
  bool varInt(uint64_t &value) {
    uint8_t first;
    if (!byte(first))
      return false;
    unsigned extra = first == 0 ? 8 : llvm::countr_zero(first);
    if (extra > end - pos)
      return false;
    uint64_t raw = extra == 8 ? 0 : first;
    unsigned shift = extra == 8 ? 0 : 8;
    for (unsigned i = 0; i < extra; ++i, shift += 8)
      raw |= uint64_t(static_cast<uint8_t>(file[pos++])) << shift;
    value = extra == 8 ? raw : raw >> (extra + 1);
    return true;
  }

  /// A section: its ID (the alignment flag cleared) and contents.
  bool section(uint8_t &id, Cursor &contents) {
    uint64_t length, alignment = 1;
    if (!byte(id) || !varInt(length))
      return false;
    if (id & 0x80) {
      if (!varInt(alignment) || !llvm::isPowerOf2_64(alignment))
        return false;
      while (pos % alignment != 0)
        if (pos == end ||
            static_cast<uint8_t>(file[pos++]) != bytecode::kAlignmentByte)
          return false;
      id &= 0x7f;
    }
    return bytes(length, contents);
  }

  bool nullTerminated(llvm::StringRef &result) {
    size_t nul = file.find('\0', pos);
    if (nul == llvm::StringRef::npos || nul >= end)
      return false;
    result = file.slice(pos, nul);
    pos = nul + 1;
    return true;
  }

  llvm::StringRef text() const { return file.slice(pos, end); }

private:
  llvm::StringRef file;
  size_t pos, end;
};

/// The string section's table: after the count, the sizes (each with its
/// NUL) in reverse order; the strings' bytes end the section.
bool readStrings(Cursor section,
                 llvm::SmallVectorImpl<llvm::StringRef> &strings) {
  llvm::StringRef all = section.text();
  uint64_t count;
  if (!section.varInt(count) || count > all.size())
    return false;
  strings.resize(count);
  size_t stringsEnd = all.size();
  for (size_t i = count; i-- > 0;) {
    uint64_t size;
    if (!section.varInt(size) || size == 0 || size > stringsEnd)
      return false;
    stringsEnd -= size;
    strings[i] = all.substr(stringsEnd, size - 1);
  }
  return true;
}
} // namespace

FailureOr<BytecodeDistInfo>
mlir::dist::scanBytecodeForDist(llvm::StringRef file) {
  BytecodeDistInfo info;
  Cursor cursor(file);
  Cursor magic(file);
  if (!cursor.bytes(4, magic) || magic.text() != llvm::StringRef("ML\xefR", 4) ||
      !cursor.varInt(info.mlirVersion) || !cursor.nullTerminated(info.producer))
    return failure();
  std::optional<Cursor> sections[bytecode::Section::kNumSections];
  while (!cursor.empty()) {
    uint8_t id;
    Cursor contents(file);
    if (!cursor.section(id, contents) || id >= bytecode::Section::kNumSections)
      return failure();
    sections[id] = contents;
  }
  llvm::SmallVector<llvm::StringRef> strings;
  if (!sections[bytecode::Section::kString] ||
      !sections[bytecode::Section::kDialect] ||
      !readStrings(*sections[bytecode::Section::kString], strings))
    return failure();

  Cursor &dialects = *sections[bytecode::Section::kDialect];
  uint64_t numDialects;
  if (!dialects.varInt(numDialects))
    return failure();
  for (uint64_t i = 0; i < numDialects; ++i) {
    uint64_t entry;
    if (!dialects.varInt(entry))
      return failure();
    // Before kDialectVersioning the entry is the name's index alone.
    bool hasVersion = false;
    if (info.mlirVersion >= bytecode::kDialectVersioning) {
      hasVersion = entry & 1;
      entry >>= 1;
    }
    if (entry >= strings.size())
      return failure();
    bool isDist = strings[entry] == DistDialect::getDialectNamespace();
    std::optional<uint64_t> version;
    if (hasVersion) {
      uint8_t id;
      Cursor payload(file);
      if (!dialects.section(id, payload) ||
          id != bytecode::Section::kDialectVersions)
        return failure();
      // dist's version is one varint (DistBytecode.cpp).
      uint64_t value;
      if (isDist && payload.varInt(value))
        version = value;
    }
    if (isDist) {
      info.hasDist = true;
      info.distVersion = version;
    }
  }
  return info;
}

std::optional<std::string>
mlir::dist::refuseBytecodeVersion(llvm::StringRef file) {
  FailureOr<BytecodeDistInfo> info = scanBytecodeForDist(file);
  // Not bytecode, or a container MLIR's reader will report itself.
  if (failed(info) || !info->hasDist)
    return std::nullopt;
  std::string writer = ("written by '" + info->producer +
                        "', MLIR bytecode version " +
                        llvm::Twine(info->mlirVersion))
                           .str();
  std::string reads = ("this dist reads dist bytecode version 1 to " +
                       llvm::Twine(DistDialect::kBytecodeVersion))
                          .str();
  if (!info->distVersion)
    return "this bytecode holds dist IR without a dist bytecode version (" +
           writer +
           "): a dist built before dist bytecode versions existed (before "
           "2026-12-04) wrote it, and its encoding of dist ops is not this "
           "one; " +
           reads +
           ". Print the file as text with the dist that wrote it and read "
           "the text, which every dist reads";
  if (*info->distVersion == 0 ||
      *info->distVersion > DistDialect::kBytecodeVersion)
    return "this bytecode holds dist IR of dist bytecode version " +
           std::to_string(*info->distVersion) + " (" + writer + "); " + reads +
           ". Read it with a dist that reads that version, or write it as "
           "text";
  return std::nullopt;
}

bool mlir::dist::checkBytecodeVersion(llvm::MemoryBufferRef buffer) {
  std::optional<std::string> refusal =
      refuseBytecodeVersion(buffer.getBuffer());
  if (!refusal)
    return true;
  llvm::errs() << buffer.getBufferIdentifier() << ": error: " << *refusal
               << "\n";
  return false;
}
