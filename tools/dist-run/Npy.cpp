//===- Npy.cpp - f32 .npy files for dist-run ------------------------------===//
//
// Format: "\x93NUMPY", major, minor, the header length (2 bytes little-endian
// in 1.0, 4 in 2.0), then an ASCII Python dict literal with the keys 'descr',
// 'fortran_order' and 'shape', padded with spaces and ending in '\n', then
// the raw array.
// https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include <algorithm>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

using namespace dist_run;

namespace {

bool hostIsLittleEndian() {
  const uint16_t one = 1;
  unsigned char first;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

void swapFloats(std::vector<float> &data) {
  for (float &f : data) {
    unsigned char b[4];
    std::memcpy(b, &f, 4);
    std::swap(b[0], b[3]);
    std::swap(b[1], b[2]);
    std::memcpy(&f, b, 4);
  }
}

/// A strict reader of the header dict: {'key': value, ...} where a value is
/// a quoted string, True/False or a tuple of non-negative integers.
struct HeaderParser {
  const std::string &text;
  size_t at = 0;
  std::string why;

  void skipSpace() {
    while (at < text.size() && std::isspace((unsigned char)text[at]))
      ++at;
  }
  bool eat(char c) {
    skipSpace();
    if (at < text.size() && text[at] == c)
      return ++at, true;
    return false;
  }
  bool quoted(std::string &out) {
    skipSpace();
    if (at >= text.size() || (text[at] != '\'' && text[at] != '"'))
      return why = "expected a quoted string at offset " + std::to_string(at),
             false;
    char quote = text[at++];
    size_t end = text.find(quote, at);
    if (end == std::string::npos)
      return why = "unterminated string", false;
    out = text.substr(at, end - at);
    at = end + 1;
    return true;
  }
  bool boolean(bool &out) {
    skipSpace();
    for (auto [word, value] :
         {std::pair{"True", true}, std::pair{"False", false}})
      if (text.compare(at, std::strlen(word), word) == 0) {
        at += std::strlen(word);
        out = value;
        return true;
      }
    return why = "expected True or False at offset " + std::to_string(at),
           false;
  }
  bool tuple(std::vector<int64_t> &out) {
    if (!eat('('))
      return why = "expected a shape tuple at offset " + std::to_string(at),
             false;
    out.clear();
    while (!eat(')')) {
      skipSpace();
      if (at >= text.size() || !std::isdigit((unsigned char)text[at]))
        return why = "expected a dimension at offset " + std::to_string(at),
               false;
      int64_t d = 0;
      while (at < text.size() && std::isdigit((unsigned char)text[at])) {
        if (d > (std::numeric_limits<int64_t>::max() - 9) / 10)
          return why = "dimension too large", false;
        d = d * 10 + (text[at++] - '0');
      }
      out.push_back(d);
      if (!eat(',')) {
        if (!eat(')'))
          return why = "expected ',' or ')' in the shape", false;
        break;
      }
    }
    return true;
  }
};

} // namespace

std::string dist_run::shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool dist_run::readNpy(const std::string &path, std::vector<int64_t> &shape,
                       std::vector<float> &data, std::string &error) {
  auto bad = [&](const std::string &why) {
    error = "'" + path + "': " + why;
    return false;
  };
  // Only a regular file, and never more of it than its header says: a
  // directory, /dev/zero or a FIFO (which would block in open() before the
  // watchdog runs) is refused by its type, and a file longer than its
  // shape needs by its size, before anything is read.
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return bad("cannot open the file: " + ec.message());
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return bad("not a regular file (a directory, device or FIFO)");
  const uint64_t fileSize = status.getSize();
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return bad("cannot open the file");
  constexpr uint64_t kMaxHeader = 1 << 20; // numpy writes a few hundred bytes
  std::string bytes(std::min<uint64_t>(fileSize, kMaxHeader + 12), '\0');
  in.read(bytes.data(), bytes.size());
  if (!in)
    return bad("cannot read the file");
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return bad("not a .npy file (no \\x93NUMPY magic)");
  unsigned major = (unsigned char)bytes[6], minor = (unsigned char)bytes[7];
  size_t headerLength, dataStart;
  if (major == 1 && minor == 0) {
    headerLength = (unsigned char)bytes[8] | size_t((unsigned char)bytes[9])
                                                 << 8;
    dataStart = 10 + headerLength;
  } else if (major == 2 && minor == 0) {
    if (bytes.size() < 12)
      return bad("truncated .npy header");
    headerLength = 0;
    for (int i = 3; i >= 0; --i)
      headerLength = headerLength << 8 | (unsigned char)bytes[8 + i];
    dataStart = 12 + headerLength;
  } else {
    return bad("unsupported .npy format version " + std::to_string(major) +
               "." + std::to_string(minor) + " (expected 1.0 or 2.0)");
  }
  if (dataStart > bytes.size())
    return bad(fileSize > bytes.size() ? "a .npy header longer than 1 MiB"
                                       : "truncated .npy header");
  std::string header = bytes.substr(dataStart - headerLength, headerLength);
  if (header.empty() || header.back() != '\n')
    return bad("malformed .npy header (not terminated by a newline)");

  HeaderParser p{header, 0, ""};
  std::string descr;
  bool fortran = false, haveDescr = false, haveOrder = false, haveShape = false;
  if (!p.eat('{'))
    return bad("malformed .npy header (expected '{')");
  while (!p.eat('}')) {
    std::string key;
    if (!p.quoted(key) || !p.eat(':'))
      return bad("malformed .npy header: " + p.why);
    bool ok;
    if (key == "descr")
      ok = p.quoted(descr), haveDescr = true;
    else if (key == "fortran_order")
      ok = p.boolean(fortran), haveOrder = true;
    else if (key == "shape")
      ok = p.tuple(shape), haveShape = true;
    else
      return bad("malformed .npy header: unknown key '" + key + "'");
    if (!ok)
      return bad("malformed .npy header: " + p.why);
    if (!p.eat(',')) {
      if (!p.eat('}'))
        return bad("malformed .npy header (expected ',' or '}')");
      break;
    }
  }
  p.skipSpace();
  if (p.at != header.size())
    return bad("malformed .npy header (text after the dict)");
  if (!haveDescr || !haveOrder || !haveShape)
    return bad(
        "malformed .npy header (needs 'descr', 'fortran_order' and 'shape')");
  size_t width = descr == "<i8" ? 8 : descr == "|b1" ? 1 : 4;
  if (descr != "<f4" && descr != "<i8" && descr != "<i4" && descr != "|b1")
    return bad("unsupported dtype '" + descr +
               "' (dist-run reads little-endian float32, '<f4', integers, "
               "'<i8' or '<i4', and booleans, '|b1')");
  if (fortran)
    return bad("unsupported Fortran order (expected C order)");

  size_t count = 1;
  for (int64_t d : shape) {
    if (d != 0 && count > std::numeric_limits<size_t>::max() / 4 / size_t(d))
      return bad("shape " + shapeString(shape) + " is too large");
    count *= size_t(d);
  }
  if (count > std::numeric_limits<size_t>::max() / 8)
    return bad("shape " + shapeString(shape) + " is too large");
  uint64_t have = fileSize - dataStart;
  if (have != count * width)
    return bad("holds " + std::to_string(have) + " data bytes, but shape " +
               shapeString(shape) + " of " +
               (descr == "<f4"   ? "float32"
                : descr == "<i8" ? "int64"
                : descr == "|b1" ? "bool"
                                 : "int32") +
               " needs " + std::to_string(count * width));
  std::string payload(count * width, '\0');
  in.clear();
  in.seekg(std::streamoff(dataStart));
  in.read(payload.data(), payload.size());
  if (!in)
    return bad("cannot read the data");
  data.resize(count);
  if (descr == "<f4") {
    if (count)
      std::memcpy(data.data(), payload.data(), count * 4);
    if (!hostIsLittleEndian())
      swapFloats(data);
    return true;
  }
  // Integers, little-endian, into f32 where exact.
  for (size_t i = 0; i < count; ++i) {
    uint64_t bits = 0;
    for (size_t b = width; b-- > 0;)
      bits = bits << 8 | (unsigned char)payload[i * width + b];
    int64_t value = width == 8   ? int64_t(bits)
                    : width == 1 ? int64_t(bits != 0)
                                 : int64_t(int32_t(bits));
    if (value > (1 << 24) || value < -(1 << 24))
      return bad("integer " + std::to_string(value) + " at index " +
                 std::to_string(i) +
                 " is not exact in float32 (dist-run holds integers as f32: "
                 "at most 2^24 in magnitude)");
    data[i] = float(value);
  }
  return true;
}

bool dist_run::checkIntegers(const std::string &path,
                             llvm::ArrayRef<float> data, mlir::Type element,
                             std::string &error) {
  bool boolean = element.isInteger(1);
  for (size_t i = 0; i < data.size(); ++i) {
    float v = data[i];
    bool ok = boolean ? (v == 0.0f || v == 1.0f)
                      : (v == std::nearbyint(v) && std::fabs(v) <= 16777216.0f);
    if (!ok) {
      std::string type;
      llvm::raw_string_ostream(type) << element;
      error = "'" + path + "': value " + std::to_string(v) + " at index " +
              std::to_string(i) + " is not " +
              (boolean ? "0 or 1" : "an integer of magnitude at most 2^24") +
              " (the argument is " + type + ")";
      return false;
    }
  }
  return true;
}

bool dist_run::writeNpy(const std::string &path,
                        const std::vector<int64_t> &shape,
                        llvm::ArrayRef<float> data, std::string &error) {
  std::string dims; // () for a scalar, (3,) for one dimension, (3, 4)
  for (size_t i = 0; i < shape.size(); ++i)
    dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1)
    dims += ",";
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Pad with spaces so that the data starts 64-byte aligned; end with '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += char(1);
  bytes += char(0);
  bytes += char(header.size() & 0xff);
  bytes += char(header.size() >> 8);
  bytes += header;
  std::vector<float> le(data.begin(), data.end());
  if (!hostIsLittleEndian())
    swapFloats(le);
  bytes.append(reinterpret_cast<const char *>(le.data()), le.size() * 4);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !out.write(bytes.data(), std::streamsize(bytes.size())) ||
      !out.flush()) {
    error = "'" + path + "': cannot write the file";
    return false;
  }
  return true;
}

bool dist_run::readNpyOfShape(const std::string &path,
                              const std::vector<int64_t> &shape,
                              std::vector<float> &data, std::string &error) {
  std::vector<int64_t> got;
  if (!readNpy(path, got, data, error))
    return false;
  if (got != shape) {
    error = "'" + path + "': expected shape " + shapeString(shape) +
            ", but the file holds " + shapeString(got);
    return false;
  }
  return true;
}

bool dist_run::readNpyShard(const std::string &path,
                            const std::vector<int64_t> &localShape,
                            int64_t shard, int64_t shards,
                            int64_t unshardedDim0, std::vector<float> &data,
                            std::string &error) {
  std::vector<int64_t> full = localShape;
  if (!full.empty())
    full[0] = unshardedDim0 >= 0 ? unshardedDim0 : full[0] * shards;
  std::vector<float> all;
  if (!readNpyOfShape(path, full, all, error))
    return false;
  // The shard's rows that exist; the rest (FSDP's padding) are zeros.
  size_t rowSize = 1;
  for (size_t d = 1; d < localShape.size(); ++d)
    rowSize *= size_t(localShape[d]);
  size_t shardSize = localShape.empty() ? 1 : rowSize * size_t(localShape[0]);
  size_t begin = std::min(size_t(shard) * shardSize, all.size());
  size_t end = std::min(begin + shardSize, all.size());
  data.assign(shardSize, 0.0f);
  std::copy(all.begin() + std::ptrdiff_t(begin),
            all.begin() + std::ptrdiff_t(end), data.begin());
  return true;
}

void dist_run::zeroPadding(const std::vector<int64_t> &localShape,
                           int64_t shard, int64_t unshardedDim0,
                           std::vector<float> &data) {
  if (unshardedDim0 < 0 || localShape.empty())
    return;
  int64_t rows = localShape[0];
  int64_t real = std::clamp<int64_t>(unshardedDim0 - shard * rows, 0, rows);
  size_t rowSize = data.size() / size_t(rows);
  std::fill(data.begin() + std::ptrdiff_t(size_t(real) * rowSize), data.end(),
            0.0f);
}
