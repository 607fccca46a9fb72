//===- DistMutator.cpp - structure-aware mutations of dist modules --------===//
//
// Textual, not structural: an edit finds a known token in the module text
// (a `tensor<...>` type, an `= [...]` list, a keyword, a symbol, a tie, a
// collective) with small hand-written scanners and rewrites it. We do not
// parse the input into MLIR and mutate the IR because (1) the interesting
// inputs are the almost-valid ones that MLIR's printer never writes (huge
// extents, repeated axes, wrong ties, mismatched types) and that a verified
// round trip would lose; (2) parse + print per mutation would cost more than
// most executions; (3) the fuzzer's byte mutator and its corpus already hold
// arbitrary text, which a structural mutator could not take. Consistency is
// kept where it matters to reach the verifier: a tensor type or an element
// type is changed everywhere it is spelled, and a collective that changes
// kind takes its wait's type along. No std::regex: libstdc++'s recursion
// depth grows with the match length, and the byte mutator writes long runs.
//
//===----------------------------------------------------------------------===//

#include "DistMutator.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

using namespace dist_fuzz;

namespace {
using Rng = std::mt19937_64;

size_t below(Rng &rng, size_t n) {
  return n ? std::uniform_int_distribution<size_t>(0, n - 1)(rng) : 0;
}
bool oneIn(Rng &rng, size_t n) { return below(rng, n) == 0; }
template <typename T> const T &pickFrom(Rng &rng, const std::vector<T> &v) {
  return v[below(rng, v.size())];
}

const std::vector<std::string> kElementTypes = {
    "f32", "f64", "f16", "bf16", "i32", "i64", "i8", "i1", "index",
    "complex<f32>", "ui32", "si64", "f8E4M3FN"};
const std::vector<std::string> kHugeInts = {
    "2147483648",          "4294967296",          "2305843009213693952",
    "4611686018427387904", "9223372036854775807", "9223372036854775808",
    "18446744073709551616"};
const std::vector<std::vector<std::string>> kKeywordSets = {
    {"sum", "avg", "max", "min", "prod"},
    {"replicated", "fully_sharded"},
    {"full", "shard", "replicate"}};

bool isIdent(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '$' || c == '-';
}
bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

size_t skipSpaces(const std::string &s, size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
    ++i;
  return i;
}

/// The end of a symbol (`@name` or `@"any"`) starting at `i`, or npos.
size_t symbolEnd(const std::string &s, size_t i) {
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

/// The end of an SSA name (`%name`) starting at `i`, or npos.
size_t ssaEnd(const std::string &s, size_t i) {
  if (i >= s.size() || s[i] != '%')
    return std::string::npos;
  size_t j = i + 1;
  while (j < s.size() && (isIdent(s[j]) || s[j] == '#'))
    ++j;
  return j == i + 1 ? std::string::npos : j;
}

/// The end of the type `tensor<...>` starting at `i` (past its closing
/// `>`), or npos.
size_t tensorEnd(const std::string &s, size_t i) {
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

struct Span {
  size_t pos, len;
};

std::vector<Span> tensorTypes(const std::string &s) {
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

/// Whole-word occurrences of `word` (not part of a longer name, a symbol or
/// an SSA value).
std::vector<size_t> wordsOf(const std::string &s, const std::string &word) {
  std::vector<size_t> at;
  for (size_t i = s.find(word); i != std::string::npos;
       i = s.find(word, i + 1)) {
    char before = i ? s[i - 1] : ' ';
    char after = i + word.size() < s.size() ? s[i + word.size()] : ' ';
    if (isWordChar(before) || before == '@' || before == '%' ||
        before == '.' || before == '"' || isWordChar(after) || after == '.')
      continue;
    at.push_back(i);
  }
  return at;
}

/// Element-type occurrences of `type`: like wordsOf, but `4xf32` counts.
std::vector<size_t> elementTypesOf(const std::string &s,
                                   const std::string &type) {
  std::vector<size_t> at;
  for (size_t i = s.find(type); i != std::string::npos;
       i = s.find(type, i + 1)) {
    char before = i ? s[i - 1] : ' ';
    char after = i + type.size() < s.size() ? s[i + type.size()] : ' ';
    bool dimBefore = before == 'x' && i >= 2 &&
                     (std::isdigit(static_cast<unsigned char>(s[i - 2])) ||
                      s[i - 2] == '?');
    if ((isWordChar(before) && !dimBefore) || before == '@' ||
        before == '%' || before == '.' || isWordChar(after))
      continue;
    at.push_back(i);
  }
  return at;
}

void replaceAll(std::string &s, const std::string &from,
                const std::string &to) {
  if (from.empty())
    return;
  for (size_t i = s.find(from); i != std::string::npos;
       i = s.find(from, i + to.size()))
    s.replace(i, from.size(), to);
}

/// A new integer near `old`, a small one, or one past int32/int64.
std::string mutateInt(Rng &rng, const std::string &old, bool negative) {
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

std::string join(const std::vector<std::string> &parts, const char *sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? sep : "") + parts[i];
  return out;
}

/// `tensor<4x?x8xf32, #enc>` as its dims and the rest (`f32, #enc`).
struct TensorParts {
  std::vector<std::string> dims;
  std::string rest;
  bool parse(const std::string &type) {
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
  std::string str() const {
    return "tensor<" + join(dims, "x") + (dims.empty() ? "" : "x") + rest +
           ">";
  }
};

/// The type with dim 0 scaled as a gather (times 2) or scatter (over 2)
/// over a group of two would scale it.
std::string scaleDim0(const std::string &type, bool gather) {
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

/// Symbols declared by `dist.mesh` or `dist.parameter`.
std::vector<std::string> declared(const std::string &s, const char *op) {
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

std::string someSymbol(Rng &rng, const std::vector<std::string> &names) {
  if (names.empty() || oneIn(rng, 8))
    return oneIn(rng, 2) ? "@nope" : "@\"fz\"";
  return pickFrom(rng, names);
}

std::string smallIntList(Rng &rng, size_t maxLen, size_t maxValue) {
  std::vector<std::string> v;
  for (size_t i = 0, n = below(rng, maxLen + 1); i < n; ++i)
    v.push_back(std::to_string(below(rng, maxValue + 1)));
  return join(v, ", ");
}

//===----------------------------------------------------------------------===//
// The edits
//===----------------------------------------------------------------------===//

/// One dim, the rank or the element type of a tensor type, at this
/// occurrence or everywhere the type is spelled.
bool mutateTensorType(std::string &s, Rng &rng) {
  std::vector<Span> types = tensorTypes(s);
  if (types.empty())
    return false;
  Span span = pickFrom(rng, types);
  std::string old = s.substr(span.pos, span.len);
  TensorParts t;
  if (!t.parse(old))
    return false;
  switch (below(rng, 6)) {
  case 0:
  case 1:
    if (t.dims.empty())
      return false;
    {
      std::string &d = t.dims[below(rng, t.dims.size())];
      d = oneIn(rng, 8) ? "?" : mutateInt(rng, d == "?" ? "4" : d, false);
    }
    break;
  case 2:
    t.dims.insert(t.dims.begin() + below(rng, t.dims.size() + 1),
                  oneIn(rng, 4) ? pickFrom(rng, kHugeInts)
                                : std::to_string(1 + below(rng, 8)));
    break;
  case 3:
    if (t.dims.empty())
      return false;
    t.dims.erase(t.dims.begin() + below(rng, t.dims.size()));
    break;
  case 4:
    if (t.dims.size() < 2)
      return false;
    std::swap(t.dims[0], t.dims[1 + below(rng, t.dims.size() - 1)]);
    break;
  default: {
    size_t comma = t.rest.find(',');
    t.rest = pickFrom(rng, kElementTypes) +
             (comma == std::string::npos ? "" : t.rest.substr(comma));
    break;
  }
  }
  std::string now = t.str();
  if (now == old)
    return false;
  if (oneIn(rng, 3))
    s.replace(span.pos, span.len, now);
  else
    replaceAll(s, old, now);
  return true;
}

/// One element type replaced by another everywhere (tensor element types,
/// scalar constants): how `complex<f32>` or `index` reaches the report.
bool mutateElementTypeEverywhere(std::string &s, Rng &rng) {
  std::vector<std::string> present;
  for (const std::string &type : kElementTypes)
    if (!elementTypesOf(s, type).empty())
      present.push_back(type);
  if (present.empty())
    return false;
  const std::string &from = pickFrom(rng, present);
  std::string to = pickFrom(rng, kElementTypes);
  if (to == from)
    return false;
  std::vector<size_t> at = elementTypesOf(s, from);
  for (auto it = at.rbegin(); it != at.rend(); ++it)
    s.replace(*it, from.size(), to);
  return true;
}

/// An `= [ints]` list: mesh extents, axes, replicate_axes (and any upstream
/// list attribute spelled that way).
bool mutateIntList(std::string &s, Rng &rng) {
  struct List {
    size_t open, close; // '[' and ']'
    bool dist;
  };
  std::vector<List> lists;
  for (size_t i = s.find('['); i != std::string::npos; i = s.find('[', i + 1)) {
    size_t eq = i;
    while (eq > 0 && s[eq - 1] == ' ')
      --eq;
    if (eq == 0 || s[eq - 1] != '=')
      continue;
    size_t close = i + 1;
    while (close < s.size() && close < i + 256 &&
           (std::isdigit(static_cast<unsigned char>(s[close])) ||
            s[close] == ',' || s[close] == ' ' || s[close] == '-'))
      ++close;
    if (close >= s.size() || s[close] != ']')
      continue;
    size_t key = eq - 1;
    while (key > 0 && s[key - 1] == ' ')
      --key;
    size_t start = key;
    while (start > 0 && isWordChar(s[start - 1]))
      --start;
    std::string name = s.substr(start, key - start);
    lists.push_back({i, close, name == "shape" || name == "axes" ||
                                   name == "replicate_axes"});
  }
  if (lists.empty())
    return false;
  std::vector<List> distLists;
  for (const List &l : lists)
    if (l.dist)
      distLists.push_back(l);
  const List &list = !distLists.empty() && !oneIn(rng, 4)
                         ? pickFrom(rng, distLists)
                         : pickFrom(rng, lists);
  std::vector<std::string> v;
  std::string body = s.substr(list.open + 1, list.close - list.open - 1);
  for (size_t i = 0; i < body.size();) {
    size_t comma = body.find(',', i);
    std::string item =
        body.substr(i, comma == std::string::npos ? std::string::npos
                                                  : comma - i);
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    if (!item.empty())
      v.push_back(item);
    if (comma == std::string::npos)
      break;
    i = comma + 1;
  }
  switch (below(rng, 7)) {
  case 0:
  case 1:
    if (v.empty())
      return false;
    {
      std::string &item = v[below(rng, v.size())];
      item = oneIn(rng, 2) ? std::to_string(below(rng, 4))
                           : mutateInt(rng, item, true);
    }
    break;
  case 2:
    v.insert(v.begin() + below(rng, v.size() + 1),
             oneIn(rng, 3) ? mutateInt(rng, "2", true)
                           : std::to_string(below(rng, 4)));
    break;
  case 3:
    if (v.empty())
      return false;
    v.erase(v.begin() + below(rng, v.size()));
    break;
  case 4:
    if (v.empty())
      return false;
    v.push_back(v[below(rng, v.size())]);
    break;
  case 5:
    if (v.size() < 2)
      return false;
    std::reverse(v.begin(), v.end());
    break;
  default:
    v.clear();
    break;
  }
  std::string now = join(v, ", ");
  if (now == body)
    return false;
  s.replace(list.open + 1, list.close - list.open - 1, now);
  return true;
}

/// Adds an `axes = [...]` or `replicate_axes = [...]` clause after
/// `on @mesh` (where the assembly allows it), or removes one.
bool mutateAxesClause(std::string &s, Rng &rng) {
  if (oneIn(rng, 3)) {
    std::vector<Span> clauses;
    for (const char *key : {" axes = [", " replicate_axes = ["})
      for (size_t i = s.find(key); i != std::string::npos;
           i = s.find(key, i + 1)) {
        size_t close = s.find(']', i);
        if (close != std::string::npos && close < i + 256)
          clauses.push_back({i, close + 1 - i});
      }
    if (clauses.empty())
      return false;
    Span c = pickFrom(rng, clauses);
    s.erase(c.pos, c.len);
    return true;
  }
  std::vector<size_t> ends;
  for (size_t i : wordsOf(s, "on")) {
    size_t at = skipSpaces(s, i + 2);
    size_t end = symbolEnd(s, at);
    if (end != std::string::npos)
      ends.push_back(end);
  }
  if (ends.empty())
    return false;
  size_t end = pickFrom(rng, ends);
  size_t next = skipSpaces(s, end);
  bool hasAxes = s.compare(next, 4, "axes") == 0;
  if (hasAxes) {
    size_t close = s.find(']', next);
    if (close == std::string::npos || close > next + 256 ||
        s.compare(skipSpaces(s, close + 1), 14, "replicate_axes") == 0)
      return false;
    s.insert(close + 1, " replicate_axes = [" + smallIntList(rng, 2, 2) + "]");
    return true;
  }
  const char *key = oneIn(rng, 4) ? " replicate_axes = [" : " axes = [";
  s.insert(end, key + smallIntList(rng, 2, 2) + "]");
  return true;
}

/// `gather_axis = N`, `scatter_axis = N`.
bool mutateCollectiveAxis(std::string &s, Rng &rng) {
  std::vector<Span> values;
  for (const char *key : {"gather_axis", "scatter_axis"})
    for (size_t i : wordsOf(s, key)) {
      size_t eq = skipSpaces(s, i + std::string(key).size());
      if (eq >= s.size() || s[eq] != '=')
        continue;
      size_t v = skipSpaces(s, eq + 1), e = v;
      while (e < s.size() && (std::isdigit(static_cast<unsigned char>(s[e])) ||
                              s[e] == '-'))
        ++e;
      if (e > v)
        values.push_back({v, e - v});
    }
  if (values.empty())
    return false;
  Span v = pickFrom(rng, values);
  std::string old = s.substr(v.pos, v.len);
  std::string now = oneIn(rng, 2) ? std::to_string(below(rng, 4))
                                  : mutateInt(rng, old, true);
  if (now == old)
    return false;
  s.replace(v.pos, v.len, now);
  return true;
}

/// A reduction, a parameter/synchronize kind or a grad_sync phase replaced
/// by another of its set (or, rarely, by a word of another set).
bool mutateKeyword(std::string &s, Rng &rng) {
  struct Hit {
    size_t pos;
    const std::vector<std::string> *set;
    std::string word;
  };
  std::vector<Hit> hits;
  for (const std::vector<std::string> &set : kKeywordSets)
    for (const std::string &word : set)
      for (size_t i : wordsOf(s, word)) {
        // Only where the dialect spells keywords: after `=` or a space.
        size_t b = i;
        while (b > 0 && s[b - 1] == ' ')
          --b;
        if (b == i && !(i > 0 && s[i - 1] == '='))
          continue;
        hits.push_back({i, &set, word});
      }
  if (hits.empty())
    return false;
  const Hit &hit = pickFrom(rng, hits);
  const std::vector<std::string> &set =
      oneIn(rng, 10) ? pickFrom(rng, kKeywordSets) : *hit.set;
  std::string now = pickFrom(rng, set);
  if (now == hit.word)
    return false;
  s.replace(hit.pos, hit.word.size(), now);
  return true;
}

/// Adds `phase = shard|replicate|full` to a `dist.grad_sync`.
bool addPhase(std::string &s, Rng &rng) {
  std::vector<size_t> ends;
  for (size_t i = s.find("dist.grad_sync "); i != std::string::npos;
       i = s.find("dist.grad_sync ", i + 1)) {
    size_t at = s.find(" for ", i);
    if (at == std::string::npos || at > i + 256)
      continue;
    size_t end = symbolEnd(s, skipSpaces(s, at + 5));
    if (end != std::string::npos &&
        s.compare(skipSpaces(s, end), 5, "phase") != 0)
      ends.push_back(end);
  }
  if (ends.empty())
    return false;
  s.insert(pickFrom(rng, ends),
           " phase = " + pickFrom(rng, kKeywordSets[2]));
  return true;
}

/// A collective rewritten as another kind, in that kind's assembly, with
/// the type of its `dist.wait` following the new future type.
bool mutateCollectiveKind(std::string &s, Rng &rng) {
  static const std::vector<std::string> kinds = {"all_reduce", "all_gather",
                                                 "reduce_scatter"};
  struct Op {
    size_t begin, end; // from `dist.` to past the type
    std::string result, kind;
  };
  std::vector<Op> ops;
  for (const std::string &kind : kinds) {
    std::string key = "dist." + kind + " ";
    for (size_t i = s.find(key); i != std::string::npos;
         i = s.find(key, i + 1)) {
      // `%f = ` before the op names its future.
      size_t eq = i;
      while (eq > 0 && s[eq - 1] == ' ')
        --eq;
      if (eq == 0 || s[eq - 1] != '=')
        continue;
      size_t r = eq - 1;
      while (r > 0 && s[r - 1] == ' ')
        --r;
      size_t rb = r;
      while (rb > 0 && (isIdent(s[rb - 1]) || s[rb - 1] == '#'))
        --rb;
      if (rb == 0 || s[rb - 1] != '%')
        continue;
      // The op ends after `: T` or `: T -> !dist.future<T2>`.
      size_t colon = s.find(':', i);
      if (colon == std::string::npos || colon > i + 512)
        continue;
      size_t t = skipSpaces(s, colon + 1);
      size_t end = tensorEnd(s, t);
      if (end == std::string::npos)
        continue;
      size_t arrow = skipSpaces(s, end);
      if (s.compare(arrow, 2, "->") == 0) {
        size_t fut = skipSpaces(s, arrow + 2);
        if (s.compare(fut, 13, "!dist.future<") == 0) {
          size_t inner = tensorEnd(s, fut + 13);
          if (inner != std::string::npos && inner < s.size() &&
              s[inner] == '>')
            end = inner + 1;
        }
      }
      ops.push_back({i, end, s.substr(rb - 1, r - rb + 1), kind});
    }
  }
  if (ops.empty())
    return false;
  const Op &op = pickFrom(rng, ops);
  std::string text = s.substr(op.begin, op.end - op.begin);
  // Operand, mesh, axes clause, reduction, input and result payload.
  size_t in = text.find('%');
  size_t inEnd = ssaEnd(text, in);
  size_t on = text.find(" on ", inEnd == std::string::npos ? 0 : inEnd);
  if (in == std::string::npos || inEnd == std::string::npos ||
      on == std::string::npos)
    return false;
  size_t mesh = skipSpaces(text, on + 4);
  size_t meshEnd = symbolEnd(text, mesh);
  if (meshEnd == std::string::npos)
    return false;
  std::string axes;
  size_t next = skipSpaces(text, meshEnd);
  if (text.compare(next, 4, "axes") == 0) {
    size_t close = text.find(']', next);
    if (close == std::string::npos)
      return false;
    axes = " " + text.substr(next, close + 1 - next);
  }
  std::string reduction = "sum";
  size_t red = text.find("reduction");
  if (red != std::string::npos) {
    size_t w = skipSpaces(text, text.find('=', red) + 1), we = w;
    while (we < text.size() && isWordChar(text[we]))
      ++we;
    reduction = text.substr(w, we - w);
  }
  if (oneIn(rng, 4))
    reduction = pickFrom(rng, kKeywordSets[0]);
  size_t t = skipSpaces(text, text.find(':') + 1);
  std::string inType = text.substr(t, tensorEnd(text, t) - t);
  std::string outType = inType;
  size_t fut = text.find("!dist.future<");
  if (fut != std::string::npos)
    outType = text.substr(fut + 13, text.size() - 1 - (fut + 13));

  std::string kind = op.kind;
  while (kind == op.kind)
    kind = pickFrom(rng, kinds);
  std::string axis = oneIn(rng, 4) ? "1" : "0";
  std::string operand = text.substr(in, inEnd - in);
  std::string head = "dist." + kind + " " + operand + " on " +
                     text.substr(mesh, meshEnd - mesh) + axes;
  std::string now, payload;
  if (kind == "all_reduce") {
    payload = inType;
    now = head + " reduction = " + reduction + " : " + inType;
  } else {
    bool gather = kind == "all_gather";
    switch (below(rng, 3)) {
    case 0:
      payload = outType;
      break;
    case 1:
      payload = inType;
      break;
    default:
      payload = scaleDim0(inType, gather);
      break;
    }
    now = head +
          (gather ? " gather_axis = " + axis
                  : " reduction = " + reduction + " scatter_axis = " + axis) +
          " : " + inType + " -> !dist.future<" + payload + ">";
  }
  s.replace(op.begin, op.end - op.begin, now);

  // The wait on the future takes its new type.
  std::string wait = "dist.wait " + op.result;
  for (size_t w = s.find(wait); w != std::string::npos;
       w = s.find(wait, w + 1)) {
    size_t after = w + wait.size();
    if (after < s.size() && (isIdent(s[after]) || s[after] == '#'))
      continue;
    size_t f = s.find("!dist.future<", after);
    if (f == std::string::npos || f > after + 64)
      break;
    size_t inner = tensorEnd(s, f + 13);
    if (inner == std::string::npos)
      break;
    s.replace(f + 13, inner - (f + 13), payload);
    break;
  }
  return true;
}

/// `{dist.param = @p}` / `{dist.grad = @p}`: retarget, swap param and grad,
/// remove; or add a tie to a function argument or result.
bool mutateTie(std::string &s, Rng &rng) {
  std::vector<std::string> params = declared(s, "dist.parameter");
  std::vector<Span> ties;
  for (const char *key : {"{dist.param", "{dist.grad"})
    for (size_t i = s.find(key); i != std::string::npos;
         i = s.find(key, i + 1)) {
      size_t close = s.find('}', i);
      if (close != std::string::npos && close < i + 256)
        ties.push_back({i, close + 1 - i});
    }
  if (!ties.empty() && !oneIn(rng, 3)) {
    Span tie = pickFrom(rng, ties);
    std::string old = s.substr(tie.pos, tie.len);
    bool isParam = old.compare(0, 11, "{dist.param") == 0;
    size_t at = old.find('@');
    std::string sym = at == std::string::npos
                          ? someSymbol(rng, params)
                          : old.substr(at, symbolEnd(old, at) - at);
    switch (below(rng, 4)) {
    case 0: // swap param and grad
      isParam = !isParam;
      break;
    case 1: { // remove, with the space before it
      size_t b = tie.pos;
      while (b > 0 && s[b - 1] == ' ')
        --b;
      s.erase(b, tie.pos + tie.len - b);
      return true;
    }
    default:
      sym = someSymbol(rng, params);
      break;
    }
    std::string now = std::string(isParam ? "{dist.param = " : "{dist.grad = ") +
                      sym + "}";
    if (now == old)
      return false;
    s.replace(tie.pos, tie.len, now);
    return true;
  }
  // Add one: a tensor in a func.func signature without an attribute.
  std::vector<size_t> funcs;
  for (size_t i = s.find("func.func "); i != std::string::npos;
       i = s.find("func.func ", i + 1))
    funcs.push_back(i);
  if (funcs.empty())
    return false;
  size_t f = pickFrom(rng, funcs);
  size_t bodyOpen = s.find("{\n", f);
  if (bodyOpen == std::string::npos)
    bodyOpen = s.size();
  size_t arrow = s.find("->", f);
  std::vector<Span> candidates;
  for (const Span &t : tensorTypes(s.substr(f, bodyOpen - f))) {
    size_t end = f + t.pos + t.len;
    if (s[skipSpaces(s, end)] != '{')
      candidates.push_back({f + t.pos, t.len});
  }
  if (candidates.empty())
    return false;
  Span t = pickFrom(rng, candidates);
  std::string sym = someSymbol(rng, params);
  bool result = arrow != std::string::npos && t.pos > arrow;
  if (oneIn(rng, 6))
    result = !result;
  std::string tie =
      std::string(result ? " {dist.grad = " : " {dist.param = ") + sym + "}";
  if (result && s[skipSpaces(s, arrow + 2)] != '(' && t.pos > arrow) {
    // A single unparenthesized result needs parentheses for an attribute.
    s.replace(t.pos, t.len, "(" + s.substr(t.pos, t.len) + tie + ")");
    return true;
  }
  s.insert(t.pos + t.len, tie);
  return true;
}

/// `on @mesh`, `for @param`, `take_stash @param`: another declared symbol
/// or an undeclared one.
bool mutateSymbolRef(std::string &s, Rng &rng) {
  std::vector<std::string> names = declared(s, "dist.mesh");
  for (const std::string &p : declared(s, "dist.parameter"))
    names.push_back(p);
  std::vector<Span> refs;
  for (const char *key : {"on", "for", "dist.take_stash"})
    for (size_t i : wordsOf(s, key)) {
      size_t at = skipSpaces(s, i + std::string(key).size());
      size_t end = symbolEnd(s, at);
      if (end != std::string::npos)
        refs.push_back({at, end - at});
    }
  if (refs.empty())
    return false;
  Span ref = pickFrom(rng, refs);
  std::string now = someSymbol(rng, names);
  if (now == s.substr(ref.pos, ref.len))
    return false;
  s.replace(ref.pos, ref.len, now);
  return true;
}

std::string someTensorType(const std::string &s, Rng &rng) {
  std::vector<Span> types = tensorTypes(s);
  if (types.empty() || oneIn(rng, 6))
    return "tensor<" + std::to_string(2 * (1 + below(rng, 4))) + "x" +
           std::to_string(1 + below(rng, 8)) + "xf32>";
  Span t = pickFrom(rng, types);
  return s.substr(t.pos, t.len);
}

/// A new `dist.mesh` or `dist.parameter` before the first function.
bool insertDeclaration(std::string &s, Rng &rng) {
  size_t at = s.find("func.func");
  if (at == std::string::npos)
    at = s.size();
  else
    at = s.rfind('\n', at) == std::string::npos ? 0 : s.rfind('\n', at) + 1;
  std::vector<std::string> meshes = declared(s, "dist.mesh");
  std::string name = "@fz" + std::to_string(below(rng, 100));
  std::string line;
  if (meshes.empty() || oneIn(rng, 3)) {
    std::vector<std::string> extents;
    for (size_t i = 0, n = 1 + below(rng, 3); i < n; ++i)
      extents.push_back(oneIn(rng, 6) ? pickFrom(rng, kHugeInts)
                                      : std::to_string(1 + below(rng, 4)));
    line = "dist.mesh " + name + " shape = [" + join(extents, ", ") + "]\n";
  } else {
    line = "dist.parameter " + name + " : " + someTensorType(s, rng) + " " +
           pickFrom(rng, kKeywordSets[1]) + " on " + pickFrom(rng, meshes);
    if (oneIn(rng, 2))
      line += " axes = [" + smallIntList(rng, 2, 1) + "]";
    if (oneIn(rng, 4))
      line += " replicate_axes = [" + smallIntList(rng, 1, 1) + "]";
    line += "\n";
  }
  s.insert(at, line);
  return true;
}

/// A new dist op at the top of a function body, on one of its tensor
/// arguments: a collective and its wait, a synchronize, a grad_sync, a
/// stash or a take_stash.
bool insertOp(std::string &s, Rng &rng) {
  std::vector<std::string> meshes = declared(s, "dist.mesh");
  std::vector<std::string> params = declared(s, "dist.parameter");
  struct Arg {
    size_t bodyStart;
    std::string name, type;
  };
  std::vector<Arg> args;
  for (size_t f = s.find("func.func "); f != std::string::npos;
       f = s.find("func.func ", f + 1)) {
    size_t body = s.find("{\n", f);
    if (body == std::string::npos)
      break;
    for (size_t p = s.find('%', f); p != std::string::npos && p < body;
         p = s.find('%', p + 1)) {
      size_t e = ssaEnd(s, p);
      if (e == std::string::npos)
        continue;
      size_t c = skipSpaces(s, e);
      if (c >= s.size() || s[c] != ':')
        continue;
      size_t t = skipSpaces(s, c + 1);
      size_t te = tensorEnd(s, t);
      if (te != std::string::npos)
        args.push_back({body + 2, s.substr(p, e - p), s.substr(t, te - t)});
    }
  }
  if (args.empty())
    return false;
  const Arg &arg = pickFrom(rng, args);
  std::string id = "%fz" + std::to_string(below(rng, 1000));
  std::string mesh = someSymbol(rng, meshes);
  std::string param = someSymbol(rng, params);
  const std::string &T = arg.type;
  std::string line;
  switch (below(rng, 7)) {
  case 0:
    line = id + " = dist.all_reduce " + arg.name + " on " + mesh +
           " reduction = " + pickFrom(rng, kKeywordSets[0]) + " : " + T +
           "\n  " + id + "w = dist.wait " + id + " : !dist.future<" + T + ">";
    break;
  case 1: {
    std::string R = scaleDim0(T, true);
    line = id + " = dist.all_gather " + arg.name + " on " + mesh +
           " gather_axis = 0 : " + T + " -> !dist.future<" + R + ">\n  " +
           id + "w = dist.wait " + id + " : !dist.future<" + R + ">";
    break;
  }
  case 2: {
    std::string R = scaleDim0(T, false);
    line = id + " = dist.reduce_scatter " + arg.name + " on " + mesh +
           " reduction = sum scatter_axis = 0 : " + T + " -> !dist.future<" +
           R + ">\n  " + id + "w = dist.wait " + id + " : !dist.future<" + R +
           ">";
    break;
  }
  case 3: {
    bool sharded = oneIn(rng, 2);
    line = id + " = dist.synchronize " + arg.name + " on " + mesh +
           " kind = " + (sharded ? "fully_sharded" : "replicated") + " : " +
           T + " -> " + (sharded ? scaleDim0(T, true) : T);
    break;
  }
  case 4:
    line = id + " = dist.grad_sync " + arg.name + " for " + param + " : " + T +
           " -> " + (oneIn(rng, 2) ? T : scaleDim0(T, false));
    break;
  case 5:
    line = "dist.stash_grad_for_fsdp " + arg.name + " for " + param + " : " +
           T;
    break;
  default:
    line = id + " = dist.take_stash " + param + " : " + T;
    break;
  }
  s.insert(arg.bodyStart, "  " + line + "\n");
  return true;
}

/// Deletes, duplicates or swaps whole lines.
bool mutateLines(std::string &s, Rng &rng) {
  std::vector<size_t> starts = {0};
  for (size_t i = s.find('\n'); i != std::string::npos && i + 1 < s.size();
       i = s.find('\n', i + 1))
    starts.push_back(i + 1);
  if (starts.size() < 2)
    return false;
  size_t k = below(rng, starts.size() - 1);
  std::string line = s.substr(starts[k], starts[k + 1] - starts[k]);
  switch (below(rng, 3)) {
  case 0:
    s.erase(starts[k], line.size());
    break;
  case 1:
    s.insert(starts[k], line);
    break;
  default: {
    size_t endNext =
        k + 2 < starts.size() ? starts[k + 2] : s.size();
    std::string next = s.substr(starts[k + 1], endNext - starts[k + 1]);
    if (next.empty() || next.back() != '\n')
      return false;
    s.replace(starts[k], line.size() + next.size(), next + line);
    break;
  }
  }
  return true;
}

/// Any integer literal.
bool mutateIntLiteral(std::string &s, Rng &rng) {
  std::vector<Span> ints;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i])) ||
        (i && (isWordChar(s[i - 1]) || s[i - 1] == '.')))
      continue;
    size_t e = i;
    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e])))
      ++e;
    if (e == s.size() || !(isWordChar(s[e]) || s[e] == '.'))
      ints.push_back({i, e - i});
    i = e;
  }
  if (ints.empty())
    return false;
  Span v = pickFrom(rng, ints);
  std::string old = s.substr(v.pos, v.len);
  std::string now = mutateInt(rng, old, false);
  if (now == old)
    return false;
  s.replace(v.pos, v.len, now);
  return true;
}
} // namespace

bool dist_fuzz::mutateOnce(std::string &text, std::mt19937_64 &rng) {
  using Edit = bool (*)(std::string &, Rng &);
  struct Weighted {
    Edit edit;
    unsigned weight;
  };
  static const Weighted edits[] = {
      {mutateTensorType, 5},   {mutateElementTypeEverywhere, 2},
      {mutateIntList, 5},      {mutateAxesClause, 2},
      {mutateCollectiveAxis, 2}, {mutateKeyword, 3},
      {addPhase, 1},           {mutateCollectiveKind, 2},
      {mutateTie, 4},          {mutateSymbolRef, 2},
      {insertDeclaration, 1},  {insertOp, 2},
      {mutateLines, 1},        {mutateIntLiteral, 1}};
  unsigned total = 0;
  for (const Weighted &w : edits)
    total += w.weight;
  size_t r = below(rng, total);
  for (const Weighted &w : edits) {
    if (r < w.weight)
      return w.edit(text, rng);
    r -= w.weight;
  }
  return false;
}

bool dist_fuzz::mutateModuleText(std::string &text, std::mt19937_64 &rng) {
  bool changed = false;
  // A few tries: an edit may find nothing to change in this input.
  for (unsigned want = 1 + (oneIn(rng, 2) ? below(rng, 4) : 0), tries = 0;
       want && tries < 16; ++tries)
    if (mutateOnce(text, rng)) {
      changed = true;
      --want;
    }
  return changed;
}

bool dist_fuzz::crashesUpstreamParser(const std::string &text) {
  for (const std::string key : {"dimensions", "permutation"})
    for (size_t at : wordsOf(text, key)) {
      size_t eq = skipSpaces(text, at + key.size());
      if (eq >= text.size() || text[eq] != '=')
        continue;
      size_t open = skipSpaces(text, eq + 1);
      if (open >= text.size() || text[open] != '[')
        return true;
      size_t close = text.find_first_not_of("0123456789-, \t\r\n", open + 1);
      if (close == std::string::npos || text[close] != ']')
        return true;
    }
  return false;
}
