//===- TraceTest.cpp - the JSON writer and the trace file -----------------===//

#include "Trace.h"
#include "Json.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

using namespace distrt;

namespace {

std::string asJsonString(const std::string &text) {
  std::string out;
  JsonWriter json(out);
  json.value(text);
  return out;
}

TEST(JsonWriter, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(asJsonString("plain"), "\"plain\"");
  EXPECT_EQ(asJsonString("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(asJsonString("C:\\path\\"), "\"C:\\\\path\\\\\"");
  EXPECT_EQ(asJsonString("a\nb\rc\td\be\ff"), "\"a\\nb\\rc\\td\\be\\ff\"");
  EXPECT_EQ(asJsonString(std::string("\x01\x1f\x7f", 3)),
            "\"\\u0001\\u001f\x7f\"");
  EXPECT_EQ(asJsonString(std::string("nul\0here", 8)), "\"nul\\u0000here\"");
  // UTF-8 and '/' pass through.
  EXPECT_EQ(asJsonString("r\xc3\xa9sum\xc3\xa9/x"),
            "\"r\xc3\xa9sum\xc3\xa9/x\"");
}

TEST(JsonWriter, Structure) {
  std::string out;
  JsonWriter json(out);
  json.beginObject();
  json.key("a");
  json.value(int64_t(-3));
  json.key("list");
  json.beginArray();
  json.value(1);
  json.value("two");
  json.beginObject();
  json.endObject();
  json.endArray();
  json.key("lines");
  json.beginArray(/*onePerLine=*/true);
  json.value(1.0, 3);
  json.value(2.5, 1);
  json.endArray();
  json.key("bad");
  json.beginArray();
  json.value(std::nan(""), 3);
  json.value(-INFINITY, 3);
  json.endArray();
  json.endObject();
  EXPECT_EQ(out, "{\"a\": -3, \"list\": [1, \"two\", {}], \"lines\": [\n"
                 "1.000,\n2.5\n], \"bad\": [null, null]}");
}

TEST(Trace, PathPerRank) {
  EXPECT_EQ(Trace::pathFor("t.json", 0, 1), "t.json");
  EXPECT_EQ(Trace::pathFor("t.json", 3, 4), "t.3.json");
  EXPECT_EQ(Trace::pathFor("dir.d/t", 3, 4), "dir.d/t.3");
  EXPECT_EQ(Trace::pathFor("t-%r.json", 0, 1), "t-0.json");
  EXPECT_EQ(Trace::pathFor("t-%r.json", 2, 4), "t-2.json");
}

TEST(Trace, UnwritablePathFailsAtOpen) {
  std::string error;
  EXPECT_EQ(Trace::open("/nonexistent-dir/t.json", 0, 1, error), nullptr);
  EXPECT_EQ(error, "cannot write the trace to '/nonexistent-dir/t.json': No "
                   "such file or directory");
}

TEST(Trace, NamesAreEscapedInTheFile) {
  std::string path = ::testing::TempDir() + "distrt_trace_test_" +
                     std::to_string(::getpid()) + ".json";
  std::string error;
  std::unique_ptr<Trace> trace = Trace::open(path, 0, 1, error);
  ASSERT_NE(trace, nullptr) << error;
  trace->add("a\"b\\c\n\x01", "comm", 1.0, 2.5, 8, 0, 1, "f32");
  ASSERT_TRUE(trace->write(error)) << error;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  EXPECT_NE(text.str().find("{\"name\": \"a\\\"b\\\\c\\n\\u0001\", \"cat\": "
                            "\"dist\", \"ph\": \"X\", \"pid\": 0, \"tid\": 1, "
                            "\"ts\": 1.000, \"dur\": 1.500, \"args\": "
                            "{\"bytes\": 8, \"group\": 0, \"group_size\": 1, "
                            "\"dtype\": \"f32\"}}\n]}\n"),
            std::string::npos)
      << text.str();
}

} // namespace
