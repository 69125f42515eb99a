// src/cli/progress_bar.h: drawn on a terminal only, throttled, cleared at the end.
#include "cli/progress_bar.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

namespace reveal::cli {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;

// A FILE* whose contents the test reads back (open_memstream).
struct Sink {
  char* buf = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&buf, &size);
  ~Sink() {
    std::fclose(f);
    std::free(buf);
  }
  std::string text() {
    std::fflush(f);
    return std::string(buf, size);
  }
};

TEST(ProgressBar, FormatsOneLine) {
  char line[160];
  EXPECT_EQ(std::string(line, format_progress_line(line, sizeof line, "reveal detect", "score", 50, 100)),
            "reveal detect: score  [############............]  50 %");
  EXPECT_EQ(std::string(line, format_progress_line(line, sizeof line, "reveal detect", "fit", 200, 100)),
            "reveal detect: fit  [########################] 100 %");
  EXPECT_EQ(std::string(line, format_progress_line(line, sizeof line, "reveal detect", "attribute", 3, 0)),
            "reveal detect: attribute  3");
  char small[10];
  EXPECT_EQ(format_progress_line(small, sizeof small, "reveal detect", "score", 1, 2), 9u);
  EXPECT_EQ(std::string(small), "reveal de");
}

TEST(ProgressBar, NotATerminalWritesNothing) {
  Sink s;
  {
    ProgressBar bar(s.f, false, "reveal detect", milliseconds(0));
    bar.update("load", 0, 1);
    bar.update("score", 5, 10);
    bar.finish();
  }
  EXPECT_EQ(s.text(), "");
}

TEST(ProgressBar, TerminalDrawsInPlaceAndClearsAtTheEnd) {
  Sink s;
  ProgressBar bar(s.f, true, "reveal train", milliseconds(0));
  bar.update("fit", 1, 4);
  const std::string first = s.text();
  EXPECT_EQ(first, "\rreveal train: fit  [######..................]  25 %");
  bar.update("fit", 4, 4);
  EXPECT_EQ(s.text().substr(first.size()), "\rreveal train: fit  [########################] 100 %");
  bar.finish();
  const std::string all = s.text();
  const std::string cleared = "\r" + std::string(first.size() - 1, ' ') + "\r";
  ASSERT_GE(all.size(), cleared.size());
  EXPECT_EQ(all.substr(all.size() - cleared.size()), cleared);
  bar.finish();  // idempotent: nothing more
  EXPECT_EQ(s.text(), all);
}

TEST(ProgressBar, ThrottlesRedrawsWithinAStage) {
  Sink s;
  ProgressBar bar(s.f, true, "reveal detect", hours(1));
  bar.update("score", 1, 100);  // first draw
  const std::size_t after_first = s.text().size();
  for (std::size_t k = 2; k <= 100; ++k) bar.update("score", k, 100);  // within the hour: skipped
  EXPECT_EQ(s.text().size(), after_first);
  bar.update("attribute", 0, 0);  // a new stage draws at once
  EXPECT_NE(s.text().find("attribute"), std::string::npos);
}

TEST(ProgressBar, ReportProgressForwardsEveryNthUnitAndTheLast) {
  struct Count : Progress {
    std::size_t calls = 0, last = 0;
    void update(std::string_view, std::size_t done, std::size_t) noexcept override { ++calls, last = done; }
  } c;
  for (std::size_t k = 1; k <= 1000; ++k) report_progress(&c, "score", k, 1000, 256);
  EXPECT_EQ(c.calls, 4u);  // 256, 512, 768, 1000
  EXPECT_EQ(c.last, 1000u);
  report_progress(nullptr, "score", 256, 1000);  // no listener: nothing
}

}  // namespace
}  // namespace reveal::cli
