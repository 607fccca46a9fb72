//===- Json.h - a small JSON writer -----------------------------*- C++ -*-===//
//
// Appends JSON text to a string: ", " and ": " separators, and arrays either
// inline or with one element per line (the trace's event list). Strings are
// escaped as RFC 8259 requires and are expected to be UTF-8; non-finite
// numbers, which JSON cannot spell, are written as null. The caller nests
// begin/end and key/value calls correctly.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_RUNTIME_JSON_H
#define DIST_RUNTIME_JSON_H

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace distrt {

class JsonWriter {
public:
  explicit JsonWriter(std::string &out) : out_(out) {}

  void beginObject() { open('{', false); }
  void endObject() { close('}'); }
  void beginArray(bool onePerLine = false) { open('[', onePerLine); }
  void endArray() { close(']'); }
  void key(std::string_view name) {
    separate();
    string(name);
    out_ += ": ";
    afterKey_ = true;
  }
  void value(std::string_view text) {
    separate();
    string(text);
  }
  void value(int64_t number) {
    separate();
    out_ += std::to_string(number);
  }
  void value(int number) { value(int64_t(number)); }
  /// `number` with `decimals` digits after the point.
  void value(double number, int decimals) {
    separate();
    char buffer[64];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), number,
                                   std::chars_format::fixed, decimals);
    if (!std::isfinite(number) || ec != std::errc())
      out_ += "null";
    else
      out_.append(buffer, end);
  }

private:
  struct Level {
    bool onePerLine;
    bool empty = true;
  };

  /// What goes before an element: nothing after a key, else a comma after
  /// the first element and the level's line break or space.
  void separate() {
    if (afterKey_) {
      afterKey_ = false;
      return;
    }
    if (levels_.empty())
      return;
    Level &level = levels_.back();
    if (!level.empty)
      out_ += ',';
    if (level.onePerLine)
      out_ += '\n';
    else if (!level.empty)
      out_ += ' ';
    level.empty = false;
  }
  void open(char bracket, bool onePerLine) {
    separate();
    out_ += bracket;
    levels_.push_back({onePerLine});
  }
  void close(char bracket) {
    if (levels_.back().onePerLine)
      out_ += '\n';
    levels_.pop_back();
    out_ += bracket;
  }
  void string(std::string_view text) {
    out_ += '"';
    for (char c : text) {
      switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\b':
        out_ += "\\b";
        break;
      case '\f':
        out_ += "\\f";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\r':
        out_ += "\\r";
        break;
      case '\t':
        out_ += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escape[8];
          std::snprintf(escape, sizeof(escape), "\\u%04x", unsigned(c));
          out_ += escape;
        } else {
          out_ += c;
        }
      }
    }
    out_ += '"';
  }

  std::string &out_;
  std::vector<Level> levels_;
  bool afterKey_ = false;
};

} // namespace distrt

#endif // DIST_RUNTIME_JSON_H
