//===- Trace.cpp - Chrome trace / Perfetto JSON of collectives ------------===//

#include "Trace.h"
#include "Json.h"

#include <cerrno>
#include <cstring>

namespace distrt {

std::unique_ptr<Trace> Trace::open(const std::string &pattern, int rank,
                                   int worldSize, std::string &error) {
  std::string path = pathFor(pattern, rank, worldSize);
  std::FILE *file = std::fopen(path.c_str(), "w");
  if (!file) {
    error = "cannot write the trace to '" + path + "': " + std::strerror(errno);
    return nullptr;
  }
  return std::unique_ptr<Trace>(new Trace(path, file, rank));
}

Trace::~Trace() {
  if (file_)
    std::fclose(file_);
}

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
  events_.push_back(
      {name, thread, dtype, startUs, endUs, bytes, group, groupSize});
}

bool Trace::write(std::string &error) {
  std::string text;
  JsonWriter json(text);
  // Written in pieces: a long run has millions of events.
  bool ok = true;
  auto flush = [&] {
    ok = ok && std::fwrite(text.data(), 1, text.size(), file_) == text.size();
    text.clear();
  };
  auto metadata = [&](const char *name, int tid, const std::string &value) {
    json.beginObject();
    json.key("name");
    json.value(name);
    json.key("ph");
    json.value("M");
    json.key("pid");
    json.value(rank_);
    if (tid >= 0) {
      json.key("tid");
      json.value(tid);
    }
    json.key("args");
    json.beginObject();
    json.key("name");
    json.value(value);
    json.endObject();
    json.endObject();
  };
  json.beginObject();
  json.key("displayTimeUnit");
  json.value("ns");
  json.key("traceEvents");
  json.beginArray(/*onePerLine=*/true);
  metadata("process_name", -1, "rank " + std::to_string(rank_));
  metadata("thread_name", 0, "host");
  metadata("thread_name", 1, "comm");
  for (const Event &e : events_) {
    json.beginObject();
    json.key("name");
    json.value(e.name);
    json.key("cat");
    json.value("dist");
    json.key("ph");
    json.value("X");
    json.key("pid");
    json.value(rank_);
    json.key("tid");
    json.value(e.thread == "comm" ? 1 : 0);
    json.key("ts");
    json.value(e.startUs, 3);
    json.key("dur");
    json.value(e.endUs - e.startUs, 3);
    json.key("args");
    json.beginObject();
    json.key("bytes");
    json.value(e.bytes);
    json.key("group");
    json.value(e.group);
    json.key("group_size");
    json.value(e.groupSize);
    json.key("dtype");
    json.value(e.dtype);
    json.endObject();
    json.endObject();
    if (text.size() >= (1 << 16))
      flush();
  }
  json.endArray();
  json.endObject();
  text += '\n';
  flush();
  ok = std::fclose(file_) == 0 && ok;
  file_ = nullptr;
  if (!ok)
    error = "cannot write the trace to '" + path_ + "'";
  return ok;
}

} // namespace distrt
