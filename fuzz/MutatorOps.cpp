//===- MutatorOps.cpp - the dist mutator's op-level edits -----------------===//
//
// The edits that rewrite a collective as another kind (its wait's type
// following), retarget, add or remove `dist.param`/`dist.grad` ties and
// symbol references, and insert declarations and ops.
//
//===----------------------------------------------------------------------===//

#include "MutatorEdits.h"

#include <string>
#include <vector>

using namespace dist_fuzz;
using namespace dist_fuzz::text;

/// A collective rewritten as another kind, in that kind's assembly, with
/// the type of its `dist.wait` following the new future type.
bool edits::mutateCollectiveKind(std::string &s, Rng &rng) {
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
          if (inner != std::string::npos && inner < s.size() && s[inner] == '>')
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
bool edits::mutateTie(std::string &s, Rng &rng) {
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
    std::string now =
        std::string(isParam ? "{dist.param = " : "{dist.grad = ") + sym + "}";
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

/// `on @mesh`, `for @param`, `take_stash @param`, `release_kept @param`:
/// another declared symbol
/// or an undeclared one.
bool edits::mutateSymbolRef(std::string &s, Rng &rng) {
  std::vector<std::string> names = declared(s, "dist.mesh");
  for (const std::string &p : declared(s, "dist.parameter"))
    names.push_back(p);
  std::vector<Span> refs;
  for (const char *key : {"on", "for", "dist.take_stash", "dist.release_kept"})
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

/// A new `dist.mesh` or `dist.parameter` before the first function.
bool edits::insertDeclaration(std::string &s, Rng &rng) {
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
bool edits::insertOp(std::string &s, Rng &rng) {
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
           " gather_axis = 0 : " + T + " -> !dist.future<" + R + ">\n  " + id +
           "w = dist.wait " + id + " : !dist.future<" + R + ">";
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
           " kind = " + (sharded ? "fully_sharded" : "replicated") + " : " + T +
           " -> " + (sharded ? scaleDim0(T, true) : T);
    break;
  }
  case 4:
    line = id + " = dist.grad_sync " + arg.name + " for " + param + " : " + T +
           " -> " + (oneIn(rng, 2) ? T : scaleDim0(T, false));
    break;
  case 5:
    line = "dist.stash_grad_for_fsdp " + arg.name + " for " + param + " : " + T;
    break;
  default:
    line = id + " = dist.take_stash " + param + " : " + T;
    break;
  }
  s.insert(arg.bodyStart, "  " + line + "\n");
  return true;
}
