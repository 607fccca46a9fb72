//===- Trace.h - Chrome trace / Perfetto JSON of collectives ----*- C++ -*-===//

#ifndef DIST_RUNTIME_TRACE_H
#define DIST_RUNTIME_TRACE_H

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace distrt {

/// Complete ("X") events, one process per rank. The file is opened when the
/// trace is, so that an unwritable DIST_TRACE fails distrt_init rather than
/// the end of a run, and written at finalize. The communication of a
/// collective (start to observed completion) is on thread "comm", the host's
/// wait on thread "host".
class Trace {
public:
  /// Opens the file rank `rank` writes for DIST_TRACE=`pattern`; null with
  /// `error` set when it cannot be opened for writing.
  static std::unique_ptr<Trace> open(const std::string &pattern, int rank,
                                     int worldSize, std::string &error);
  ~Trace();
  Trace(const Trace &) = delete;
  Trace &operator=(const Trace &) = delete;

  void add(const char *name, const char *thread, double startUs, double endUs,
           int64_t bytes, int64_t group, int groupSize, const char *dtype);
  /// Writes the events and closes the file; false with `error` set when it
  /// cannot.
  bool write(std::string &error);

  /// The file rank `rank` writes for DIST_TRACE=`pattern`.
  static std::string pathFor(const std::string &pattern, int rank,
                             int worldSize);

private:
  Trace(std::string path, std::FILE *file, int rank)
      : path_(std::move(path)), file_(file), rank_(rank) {}

  struct Event {
    std::string name, thread, dtype;
    double startUs, endUs;
    int64_t bytes, group;
    int groupSize;
  };
  std::string path_;
  std::FILE *file_;
  int rank_;
  std::vector<Event> events_;
};

} // namespace distrt

#endif // DIST_RUNTIME_TRACE_H
