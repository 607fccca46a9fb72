//===- MutatorText.cpp - text scanners for the dist mutator ---------------===//

#include "MutatorText.h"

#include <cstdlib>

using namespace dist_fuzz;
using namespace dist_fuzz::text;

const std::vector<std::string> text::kElementTypes = {
    "f32", "f64",   "f16",          "bf16", "i32",  "i64",     "i8",
    "i1",  "index", "complex<f32>", "ui32", "si64", "f8E4M3FN"};
const std::vector<std::string> text::kHugeInts = {
    "2147483648",          "4294967296",          "2305843009213693952",
    "4611686018427387904", "9223372036854775807", "9223372036854775808",
    "18446744073709551616"};
const std::vector<std::vector<std::string>> text::kKeywordSets = {
    {"sum", "avg", "max", "min", "prod"},
    {"replicated", "fully_sharded"},
    {"full", "shard", "replicate"}};

size_t text::skipSpaces(const std::string &s, size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
    ++i;
  return i;
}

size_t text::symbolEnd(const std::string &s, size_t i) {
  if (i >= s.size() || s[i] != '@')
    return std::string::npos;
  if (i + 1 < s.size() && s[i + 1] == '"') {
    size_t close = s.find('"', i + 2);
    return close == std::string::npos ? close : close + 1;
  }
  size_t j = i + 1;
  while (j < s.size() && isIdent(s[j]))
    ++j;
  return j == i + 1 ? std::string::npos : j;
}

size_t text::ssaEnd(const std::string &s, size_t i) {
  if (i >= s.size() || s[i] != '%')
    return std::string::npos;
  size_t j = i + 1;
  while (j < s.size() && (isIdent(s[j]) || s[j] == '#'))
    ++j;
  return j == i + 1 ? std::string::npos : j;
}

size_t text::tensorEnd(const std::string &s, size_t i) {
  if (s.compare(i, 7, "tensor<") != 0)
    return std::string::npos;
  int depth = 0;
  for (size_t j = i + 6; j < s.size() && j < i + 512; ++j) {
    if (s[j] == '<')
      ++depth;
    else if (s[j] == '>' && --depth == 0)
      return j + 1;
    else if (s[j] == '\n')
      break;
  }
  return std::string::npos;
}

std::vector<Span> text::tensorTypes(const std::string &s) {
  std::vector<Span> spans;
  for (size_t i = s.find("tensor<"); i != std::string::npos;
       i = s.find("tensor<", i + 7)) {
    if (i > 0 && isWordChar(s[i - 1]))
      continue;
    size_t end = tensorEnd(s, i);
    if (end != std::string::npos)
      spans.push_back({i, end - i});
  }
  return spans;
}

std::vector<size_t> text::wordsOf(const std::string &s,
                                  const std::string &word) {
  std::vector<size_t> at;
  for (size_t i = s.find(word); i != std::string::npos;
       i = s.find(word, i + 1)) {
    char before = i ? s[i - 1] : ' ';
    char after = i + word.size() < s.size() ? s[i + word.size()] : ' ';
    if (isWordChar(before) || before == '@' || before == '%' || before == '.' ||
        before == '"' || isWordChar(after) || after == '.')
      continue;
    at.push_back(i);
  }
  return at;
}

std::vector<size_t> text::elementTypesOf(const std::string &s,
                                         const std::string &type) {
  std::vector<size_t> at;
  for (size_t i = s.find(type); i != std::string::npos;
       i = s.find(type, i + 1)) {
    char before = i ? s[i - 1] : ' ';
    char after = i + type.size() < s.size() ? s[i + type.size()] : ' ';
    bool dimBefore =
        before == 'x' && i >= 2 &&
        (std::isdigit(static_cast<unsigned char>(s[i - 2])) || s[i - 2] == '?');
    if ((isWordChar(before) && !dimBefore) || before == '@' || before == '%' ||
        before == '.' || isWordChar(after))
      continue;
    at.push_back(i);
  }
  return at;
}

void text::replaceAll(std::string &s, const std::string &from,
                      const std::string &to) {
  if (from.empty())
    return;
  for (size_t i = s.find(from); i != std::string::npos;
       i = s.find(from, i + to.size()))
    s.replace(i, from.size(), to);
}

std::string text::mutateInt(Rng &rng, const std::string &old, bool negative) {
  long long v = std::strtoll(old.c_str(), nullptr, 10);
  long long r = 0;
  switch (below(rng, 7)) {
  case 0:
    return std::to_string(below(rng, 9));
  case 1:
    return pickFrom(rng, kHugeInts);
  case 2:
    return __builtin_mul_overflow(v, 2LL, &r) ? pickFrom(rng, kHugeInts)
                                              : std::to_string(r);
  case 3:
    return std::to_string(v / 2);
  case 4:
    return __builtin_add_overflow(v, 1LL, &r) ? pickFrom(rng, kHugeInts)
                                              : std::to_string(r);
  case 5:
    return __builtin_sub_overflow(v, 1LL, &r) || (!negative && r < 0)
               ? std::string("0")
               : std::to_string(r);
  default:
    return negative ? "-1" : "1";
  }
}

std::string text::join(const std::vector<std::string> &parts, const char *sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? sep : "") + parts[i];
  return out;
}

bool TensorParts::parse(const std::string &type) {
  dims.clear();
  std::string inner = type.substr(7, type.size() - 8);
  size_t i = 0;
  while (i < inner.size()) {
    size_t j = i;
    if (inner[j] == '?')
      ++j;
    else
      while (j < inner.size() &&
             std::isdigit(static_cast<unsigned char>(inner[j])))
        ++j;
    if (j == i || j >= inner.size() || inner[j] != 'x')
      break;
    dims.push_back(inner.substr(i, j - i));
    i = j + 1;
  }
  rest = inner.substr(i);
  return !rest.empty();
}

std::string TensorParts::str() const {
  return "tensor<" + join(dims, "x") + (dims.empty() ? "" : "x") + rest + ">";
}

std::string text::scaleDim0(const std::string &type, bool gather) {
  TensorParts t;
  if (!t.parse(type) || t.dims.empty() || t.dims[0] == "?")
    return type;
  long long d = std::strtoll(t.dims[0].c_str(), nullptr, 10);
  long long r = 0;
  if (gather && __builtin_mul_overflow(d, 2LL, &r))
    return type;
  t.dims[0] = std::to_string(gather ? r : d / 2);
  return t.str();
}

std::vector<std::string> text::declared(const std::string &s, const char *op) {
  std::vector<std::string> names;
  std::string prefix = std::string(op) + " ";
  for (size_t i = s.find(prefix); i != std::string::npos;
       i = s.find(prefix, i + 1)) {
    size_t at = skipSpaces(s, i + prefix.size());
    size_t end = symbolEnd(s, at);
    if (end != std::string::npos)
      names.push_back(s.substr(at, end - at));
  }
  return names;
}

std::string text::someSymbol(Rng &rng, const std::vector<std::string> &names) {
  if (names.empty() || oneIn(rng, 8))
    return oneIn(rng, 2) ? "@nope" : "@\"fz\"";
  return pickFrom(rng, names);
}

std::string text::smallIntList(Rng &rng, size_t maxLen, size_t maxValue) {
  std::vector<std::string> v;
  for (size_t i = 0, n = below(rng, maxLen + 1); i < n; ++i)
    v.push_back(std::to_string(below(rng, maxValue + 1)));
  return join(v, ", ");
}

std::string text::someTensorType(const std::string &s, Rng &rng) {
  std::vector<Span> types = tensorTypes(s);
  if (types.empty() || oneIn(rng, 6))
    return "tensor<" + std::to_string(2 * (1 + below(rng, 4))) + "x" +
           std::to_string(1 + below(rng, 8)) + "xf32>";
  Span t = pickFrom(rng, types);
  return s.substr(t.pos, t.len);
}
