//===- TraceJsonDump.cpp - a trace whose event names are the arguments ---===//
//
// `TraceJsonDump FILE NAME...` writes a trace with one event per NAME, so
// that check_trace_json.py can parse it with a real JSON parser.
//
//===----------------------------------------------------------------------===//

#include "Trace.h"

#include <cstdio>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: TraceJsonDump FILE NAME...\n");
    return 2;
  }
  std::string error;
  std::unique_ptr<distrt::Trace> trace =
      distrt::Trace::open(argv[1], 0, 1, error);
  if (!trace) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  for (int i = 2; i < argc; ++i)
    trace->add(argv[i], i % 2 ? "comm" : "host", i, i + 0.5, i, 0, 1, argv[i]);
  if (!trace->write(error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  return 0;
}
