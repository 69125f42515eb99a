#include "telemetry/procfs/vmstat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(ProcVmstatProbe, AllFieldsFromVmFixture) {
  ProcVmstatProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_EQ(p.channels().size(), 192u);
  expect_names_follow_rule(p, "proc.vmstat");
  const auto& free = info(p, "proc.vmstat:nr_free_pages");
  EXPECT_EQ(free.kind, Kind::gauge);
  EXPECT_EQ(free.unit, "pages");
  EXPECT_EQ(free.subsystem, Subsystem::memory);
  const auto& fault = info(p, "proc.vmstat:pgfault");
  EXPECT_EQ(fault.kind, Kind::counter);
  EXPECT_EQ(fault.unit, "count");
  EXPECT_EQ(fault.subsystem, Subsystem::memory);
  const auto& pgpgin = info(p, "proc.vmstat:pgpgin");
  EXPECT_EQ(pgpgin.kind, Kind::counter);
  EXPECT_EQ(pgpgin.unit, "kB");
  EXPECT_EQ(pgpgin.subsystem, Subsystem::storage);
  EXPECT_EQ(info(p, "proc.vmstat:pgpgout").subsystem, Subsystem::storage);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.vmstat:nr_free_pages"), 898527);
  EXPECT_EQ(value(p, v, "proc.vmstat:pgfault"), 7703523);
  EXPECT_EQ(value(p, v, "proc.vmstat:pgmajfault"), 1233);
  EXPECT_EQ(value(p, v, "proc.vmstat:pgpgin"), 1750025);
  EXPECT_TRUE(all_finite(v));
}

TEST(ProcVmstatProbe, LargeCountersExact) {
  ProcVmstatProbe p;
  ASSERT_TRUE(p.open(fixture("edge-extra-columns")).available);
  EXPECT_EQ(p.channels().size(), 9u);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.vmstat:pgfault"), 99999999999.0);
  EXPECT_EQ(value(p, v, "proc.vmstat:pswpout"), 5);
  EXPECT_EQ(value(p, v, "proc.vmstat:future_counter"), 1);  // extra token ignored
}

TEST(ProcVmstatProbe, VanishedFileGivesNanThenRecovers) {
  TempRoot root("edge-extra-columns");
  ProcVmstatProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.remove("proc/vmstat");
  EXPECT_TRUE(all_nan(sample(p)));
  root.write("proc/vmstat", "pgfault 100\nnr_dirty 3\n");
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.vmstat:pgfault"), 100);
  EXPECT_EQ(value(p, v, "proc.vmstat:nr_dirty"), 3);
  EXPECT_TRUE(std::isnan(value(p, v, "proc.vmstat:nr_free_pages")));
}

// Lines inserted, removed or reordered between samples (a kernel module adding counters): the
// in-order match fails and values are found by name; a vanished key is NaN; the original
// layout afterwards reads right again.
TEST(ProcVmstatProbe, LayoutChangesBetweenSamples) {
  TempRoot root("edge-extra-columns");
  ProcVmstatProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  const double nan = std::nan("");
  struct Step {
    std::string what, text;
    std::map<std::string, double> want;  // channel (without "proc.vmstat:") -> value
  };
  const std::vector<Step> steps{
      {"a line inserted in front and one in the middle",
       "nr_new 5\nnr_free_pages 1001\nnr_dirty 13\npgpgin 2049\nnr_dirty_threshold 9\npgpgout 4097\n"
       "pgfault 100\npgmajfault 18\npswpin 1\npswpout 6\nfuture_counter 2 2\n",
       {{"nr_free_pages", 1001}, {"nr_dirty", 13}, {"pgpgout", 4097}, {"pgfault", 100},
        {"future_counter", 2}}},
      {"lines removed", "nr_free_pages 1002\npgpgin 2050\npgpgout 4098\npswpout 7\n",
       {{"nr_free_pages", 1002}, {"nr_dirty", nan}, {"pgpgin", 2050}, {"pgfault", nan},
        {"pswpout", 7}, {"future_counter", nan}}},
      {"reordered, and a key that only extends a known one (nr_dirty_x)",
       "pswpout 8\npgfault 101\nnr_dirty_x 50\nnr_dirty 14\nnr_free_pages 1003\nfuture_counter 3\n"
       "pswpin 2\npgmajfault 19\npgpgout 4099\npgpgin 2051\n",
       {{"pswpout", 8}, {"pgfault", 101}, {"nr_dirty", 14}, {"nr_free_pages", 1003}, {"pgpgin", 2051}}},
      {"back to the layout seen at open, one value malformed",
       "nr_free_pages 1004\nnr_dirty 15\npgpgin 2052\npgpgout 4100\npgfault 12kB\npgmajfault 20\n"
       "pswpin 3\npswpout 9\nfuture_counter 4 2\n",
       {{"nr_free_pages", 1004}, {"nr_dirty", 15}, {"pgpgin", 2052}, {"pgpgout", 4100}, {"pgfault", nan},
        {"pgmajfault", 20}, {"pswpin", 3}, {"pswpout", 9}, {"future_counter", 4}}},
  };
  for (const auto& step : steps) {
    root.write("proc/vmstat", step.text);
    expect_values(p, sample(p), "proc.vmstat:", step.want, step.what);
  }
}

// Random layouts of a real /proc/vmstat against the plain reading of it by key.
TEST(ProcVmstatProbe, RandomLayoutsMatchLookupByName) {
  TempRoot root("vm-2cpu");
  std::vector<std::pair<std::string, std::string>> at_open;
  {
    std::ifstream in(root.path() / "proc/vmstat");
    for (std::string k, v; in >> k >> v;) at_open.emplace_back(k, v);
  }
  ASSERT_GT(at_open.size(), 100u);
  ProcVmstatProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  std::mt19937 rng(99);
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  for (int round = 0; round < 200; ++round) {
    auto lines = at_open;
    for (auto& l : lines) l.second = std::to_string(static_cast<long long>(rng() % 1000000) - 5);
    if (round % 2 == 1) {  // every other round: the layout seen at open, new values
      for (int m = 0, n = static_cast<int>(pick(6)); m < n; ++m) {
        switch (pick(4)) {
          case 0: lines.erase(lines.begin() + pick(lines.size())); break;
          case 1: lines.insert(lines.begin() + pick(lines.size() + 1), {"added_" + std::to_string(m), "1"}); break;
          case 2: std::swap(lines[pick(lines.size())], lines[pick(lines.size())]); break;
          default: lines[pick(lines.size())].second = "-"; break;
        }
      }
      if (pick(5) == 0) std::shuffle(lines.begin(), lines.end(), rng);
    }
    std::string text;
    std::map<std::string, double> in_text, want;
    for (const auto& [k, t] : lines) {
      text += k + " " + t + "\n";
      const auto x = parse_i64(t);
      in_text[k] = x ? static_cast<double>(*x) : std::nan("");
    }
    root.write("proc/vmstat", text);
    for (const auto& c : p.channels()) {  // every channel: absent from the text means NaN
      const std::string key = c.name.substr(std::string("proc.vmstat:").size());
      const auto it = in_text.find(key);
      want[key] = it == in_text.end() ? std::nan("") : it->second;
    }
    expect_values(p, sample(p), "proc.vmstat:", want, "round " + std::to_string(round));
  }
}

}  // namespace
}  // namespace reveal::telemetry
