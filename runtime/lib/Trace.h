//===- Trace.h - Chrome trace / Perfetto JSON of collectives ----*- C++ -*-===//

#ifndef DIST_RUNTIME_TRACE_H
#define DIST_RUNTIME_TRACE_H

#include <cstdint>
#include <string>
#include <vector>

namespace distrt {

/// Complete ("X") events, one process per rank, written at finalize. The
/// communication of a collective (start to observed completion) is on
/// thread "comm", the host's wait on thread "host".
class Trace {
public:
  Trace(std::string path, int rank, int worldSize);
  void add(const char *name, const char *thread, double startUs, double endUs,
           int64_t bytes, int64_t group, int groupSize, const char *dtype);
  /// Writes the file; false with `error` set when it cannot.
  bool write(std::string &error) const;
  const std::string &path() const { return path_; }

  /// The file rank `rank` writes for DIST_TRACE=`pattern`.
  static std::string pathFor(const std::string &pattern, int rank,
                             int worldSize);

private:
  struct Event {
    std::string name, thread, dtype;
    double startUs, endUs;
    int64_t bytes, group;
    int groupSize;
  };
  std::string path_;
  int rank_;
  std::vector<Event> events_;
};

} // namespace distrt

#endif // DIST_RUNTIME_TRACE_H
