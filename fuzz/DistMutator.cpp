//===- DistMutator.cpp - structure-aware mutations of dist modules --------===//
//
// Textual, not structural: an edit finds a known token in the module text
// (a `tensor<...>` type, an `= [...]` list, a keyword, a symbol, a tie, a
// collective) with small hand-written scanners (MutatorText.h) and rewrites
// it. We do not parse the input into MLIR and mutate the IR because (1) the
// interesting inputs are the almost-valid ones that MLIR's printer never
// writes (huge extents, repeated axes, wrong ties, mismatched types) and
// that a verified round trip would lose; (2) parse + print per mutation
// would cost more than most executions; (3) the fuzzer's byte mutator and
// its corpus already hold arbitrary text, which a structural mutator could
// not take. Consistency is kept where it matters to reach the verifier: a
// tensor type or an element type is changed everywhere it is spelled, and a
// collective that changes kind takes its wait's type along. This file holds
// the token edits and the draw among all edits; MutatorOps.cpp the edits
// that rewrite or insert ops, declarations and ties.
//
//===----------------------------------------------------------------------===//

#include "DistMutator.h"
#include "MutatorEdits.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace dist_fuzz;
using namespace dist_fuzz::edits;
using namespace dist_fuzz::text;

/// One dim, the rank or the element type of a tensor type, at this
/// occurrence or everywhere the type is spelled.
bool edits::mutateTensorType(std::string &s, Rng &rng) {
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
bool edits::mutateElementTypeEverywhere(std::string &s, Rng &rng) {
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
bool edits::mutateIntList(std::string &s, Rng &rng) {
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
    lists.push_back(
        {i, close,
         name == "shape" || name == "axes" || name == "replicate_axes"});
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
    std::string item = body.substr(
        i, comma == std::string::npos ? std::string::npos : comma - i);
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
bool edits::mutateAxesClause(std::string &s, Rng &rng) {
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
bool edits::mutateCollectiveAxis(std::string &s, Rng &rng) {
  std::vector<Span> values;
  for (const char *key : {"gather_axis", "scatter_axis"})
    for (size_t i : wordsOf(s, key)) {
      size_t eq = skipSpaces(s, i + std::string(key).size());
      if (eq >= s.size() || s[eq] != '=')
        continue;
      size_t v = skipSpaces(s, eq + 1), e = v;
      while (e < s.size() &&
             (std::isdigit(static_cast<unsigned char>(s[e])) || s[e] == '-'))
        ++e;
      if (e > v)
        values.push_back({v, e - v});
    }
  if (values.empty())
    return false;
  Span v = pickFrom(rng, values);
  std::string old = s.substr(v.pos, v.len);
  std::string now =
      oneIn(rng, 2) ? std::to_string(below(rng, 4)) : mutateInt(rng, old, true);
  if (now == old)
    return false;
  s.replace(v.pos, v.len, now);
  return true;
}

/// A reduction, a parameter/synchronize kind or a grad_sync phase replaced
/// by another of its set (or, rarely, by a word of another set).
bool edits::mutateKeyword(std::string &s, Rng &rng) {
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
bool edits::addPhase(std::string &s, Rng &rng) {
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
  s.insert(pickFrom(rng, ends), " phase = " + pickFrom(rng, kKeywordSets[2]));
  return true;
}

/// Deletes, duplicates or swaps whole lines.
bool edits::mutateLines(std::string &s, Rng &rng) {
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
    size_t endNext = k + 2 < starts.size() ? starts[k + 2] : s.size();
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
bool edits::mutateIntLiteral(std::string &s, Rng &rng) {
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

bool dist_fuzz::mutateOnce(std::string &text, std::mt19937_64 &rng) {
  using Edit = bool (*)(std::string &, Rng &);
  struct Weighted {
    Edit edit;
    unsigned weight;
  };
  static const Weighted edits[] = {{mutateTensorType, 5},
                                   {mutateElementTypeEverywhere, 2},
                                   {mutateIntList, 5},
                                   {mutateAxesClause, 2},
                                   {mutateCollectiveAxis, 2},
                                   {mutateKeyword, 3},
                                   {addPhase, 1},
                                   {mutateCollectiveKind, 2},
                                   {mutateTie, 4},
                                   {mutateSymbolRef, 2},
                                   {insertDeclaration, 1},
                                   {insertOp, 2},
                                   {mutateLines, 1},
                                   {mutateIntLiteral, 1}};
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
