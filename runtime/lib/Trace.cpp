//===- Trace.cpp - Chrome trace / Perfetto JSON of collectives ------------===//

#include "Trace.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace distrt {

Trace::Trace(std::string path, int rank, int worldSize)
    : path_(pathFor(path, rank, worldSize)), rank_(rank) {}

std::string Trace::pathFor(const std::string &pattern, int rank,
                           int worldSize) {
  std::string path = pattern;
  size_t at = path.find("%r");
  if (at != std::string::npos)
    return path.replace(at, 2, std::to_string(rank));
  if (worldSize == 1)
    return path;
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  std::string suffix = "." + std::to_string(rank);
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return path + suffix;
  return path.insert(dot, suffix);
}

void Trace::add(const char *name, const char *thread, double startUs,
                double endUs, int64_t bytes, int64_t group, int groupSize,
                const char *dtype) {
  events_.push_back({name, thread, dtype, startUs, endUs, bytes, group,
                     groupSize});
}

bool Trace::write(std::string &error) const {
  FILE *file = std::fopen(path_.c_str(), "w");
  if (!file) {
    error = "cannot write the trace to '" + path_ + "': " + std::strerror(errno);
    return false;
  }
  std::fprintf(file, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
  std::fprintf(file,
               "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, "
               "\"args\": {\"name\": \"rank %d\"}},\n"
               "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, "
               "\"tid\": 0, \"args\": {\"name\": \"host\"}},\n"
               "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, "
               "\"tid\": 1, \"args\": {\"name\": \"comm\"}}",
               rank_, rank_, rank_, rank_);
  for (const Event &e : events_)
    std::fprintf(file,
                 ",\n{\"name\": \"%s\", \"cat\": \"dist\", \"ph\": \"X\", "
                 "\"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, "
                 "\"args\": {\"bytes\": %lld, \"group\": %lld, "
                 "\"group_size\": %d, \"dtype\": \"%s\"}}",
                 e.name.c_str(), rank_, e.thread == "comm" ? 1 : 0, e.startUs,
                 e.endUs - e.startUs, (long long)e.bytes, (long long)e.group,
                 e.groupSize, e.dtype.c_str());
  std::fprintf(file, "\n]}\n");
  bool ok = std::fclose(file) == 0;
  if (!ok)
    error = "cannot write the trace to '" + path_ + "'";
  return ok;
}

} // namespace distrt
