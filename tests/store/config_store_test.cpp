// Store round trip of the configuration table: snapshot at start, changes later (old values
// rebuilt on load), and stores without the table.
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "reveal/host_config.h"
#include "reveal/store.h"
#include "store_test_util.h"

namespace reveal {
namespace {

namespace fs = std::filesystem;

class ConfigStoreTest : public testing::StoreDirTest {};

RunMetadata meta() { return testing::minimal_meta(); }
std::vector<ChannelInfo> channels() { return testing::one_channel(); }

TEST_F(ConfigStoreTest, SnapshotAndChangesRoundTrip) {
  const fs::path p = dir_ / "run.db";
  const ConfigSnapshot start{{"cpu.governor", "performance"}, {"net.eth0.mtu", "1500"}, {"thp.enabled", "madvise"}};
  {
    StoreWriter w(p, meta(), channels());
    w.append_config(1'000, start);
    const double row[] = {1.0};
    w.append(1'100, row);
    w.append_config_changes({{5'000, "net.eth0.mtu", "1500", "9000"}, {5'000, "thp.enabled", "madvise", ""}});
    w.append_config_changes({{6'000, "net.eth1.mtu", "", "4200"}, {7'000, "net.eth0.mtu", "9000", "1500"}});
    w.append_config_changes({});
    w.finish(7'000, 0);
  }
  const Recording r = load_recording(p);
  EXPECT_EQ(r.config, start);
  ASSERT_EQ(r.config_changes.size(), 4u);
  const auto& c = r.config_changes;
  EXPECT_EQ(c[0].t_unix_ns, 5'000);
  EXPECT_EQ(c[0].key, "net.eth0.mtu");
  EXPECT_EQ(c[0].old_value, "1500");
  EXPECT_EQ(c[0].value, "9000");
  EXPECT_EQ(c[1].key, "thp.enabled");
  EXPECT_EQ(c[1].old_value, "madvise");
  EXPECT_EQ(c[1].value, "");
  EXPECT_EQ(c[2].key, "net.eth1.mtu");
  EXPECT_EQ(c[2].old_value, "");
  EXPECT_EQ(c[2].value, "4200");
  EXPECT_EQ(c[3].t_unix_ns, 7'000);
  EXPECT_EQ(c[3].old_value, "9000");  // rebuilt by replay, not stored
  EXPECT_EQ(c[3].value, "1500");
  const ConfigSnapshot end{{"cpu.governor", "performance"}, {"net.eth0.mtu", "1500"}, {"net.eth1.mtu", "4200"}};
  EXPECT_EQ(config_at_end(r), end);
  EXPECT_EQ(r.t_unix_ns.size(), 1u);
}

TEST_F(ConfigStoreTest, EmptySnapshotThenAChange) {
  const fs::path p = dir_ / "run.db";
  {
    StoreWriter w(p, meta(), channels());
    w.append_config(1'000, {});
    w.append_config_changes({{2'000, "net.eth0.mtu", "", "1500"}});
    w.finish(2'000, 0);
  }
  const Recording r = load_recording(p);
  EXPECT_TRUE(r.config.empty());
  ASSERT_EQ(r.config_changes.size(), 1u);
  EXPECT_EQ(r.config_changes[0].value, "1500");
}

TEST_F(ConfigStoreTest, StoreWithoutConfigTableLoadsEmpty) {
  const fs::path p = dir_ / "old.db";
  {
    StoreWriter w(p, meta(), channels());
    w.finish(1'000, 0);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE config;", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const Recording r = load_recording(p);
  EXPECT_TRUE(r.config.empty());
  EXPECT_TRUE(r.config_changes.empty());
  EXPECT_EQ(r.meta.hostname, "h1");
}

}  // namespace
}  // namespace reveal
