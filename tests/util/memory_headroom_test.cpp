#include "util/memory_headroom.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>

namespace reveal {
namespace {
namespace fs = std::filesystem;

constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kMiB = 1 << 20;

class Root {
 public:
  Root() {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("reveal-headroom-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(dir_);
  }
  ~Root() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void put(const std::string& rel, const std::string& text) const {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel, std::ios::trunc) << text;
  }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

TEST(MemoryHeadroom, TheTightestCgroupV2LimitOnTheWayUp) {
  Root r;
  r.put("sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
  r.put("proc/self/cgroup", "0::/kubepods.slice/pod1/ctr\n");
  // The container: no limit of its own; the pod: 512 MiB, 400 used; the slice: 8 GiB, 1 used.
  r.put("sys/fs/cgroup/kubepods.slice/pod1/ctr/memory.max", "max\n");
  r.put("sys/fs/cgroup/kubepods.slice/pod1/ctr/memory.current", "123\n");
  r.put("sys/fs/cgroup/kubepods.slice/pod1/memory.max", std::to_string(512 * kMiB) + "\n");
  r.put("sys/fs/cgroup/kubepods.slice/pod1/memory.current", std::to_string(400 * kMiB) + "\n");
  r.put("sys/fs/cgroup/kubepods.slice/memory.max", std::to_string(8192 * kMiB) + "\n");
  r.put("sys/fs/cgroup/kubepods.slice/memory.current", std::to_string(1024 * kMiB) + "\n");
  EXPECT_EQ(cgroup_memory_headroom(r.dir()), 112 * kMiB);
  // Inactive page cache is not held: 100 MiB of the pod's 400 is.
  r.put("sys/fs/cgroup/kubepods.slice/pod1/memory.stat", "anon 1\nfile 2\ninactive_file " + std::to_string(100 * kMiB) + "\n");
  EXPECT_EQ(cgroup_memory_headroom(r.dir()), 212 * kMiB);
  r.put("sys/fs/cgroup/kubepods.slice/pod1/memory.stat", "");
  // At or over its limit: nothing left.
  r.put("sys/fs/cgroup/kubepods.slice/pod1/memory.current", std::to_string(600 * kMiB) + "\n");
  EXPECT_EQ(cgroup_memory_headroom(r.dir()), 0u);
}

TEST(MemoryHeadroom, HybridHostsUnifiedTreeAndTheV1MemoryController) {
  Root r;
  r.put("sys/fs/cgroup/unified/cgroup.controllers", "");
  r.put("proc/self/cgroup", "12:pids:/system.slice/reveal-agent.service\n"
                            "4:memory:/system.slice/reveal-agent.service\n"
                            "1:name=systemd:/system.slice/reveal-agent.service\n"
                            "0::/system.slice/reveal-agent.service\n");
  // v1: MemoryMax=512M, 100 MiB used; the slice above unlimited (v1's huge number).
  r.put("sys/fs/cgroup/memory/system.slice/reveal-agent.service/memory.limit_in_bytes", std::to_string(512 * kMiB) + "\n");
  r.put("sys/fs/cgroup/memory/system.slice/reveal-agent.service/memory.usage_in_bytes", std::to_string(100 * kMiB) + "\n");
  r.put("sys/fs/cgroup/memory/system.slice/memory.limit_in_bytes", "9223372036854771712\n");
  r.put("sys/fs/cgroup/memory/system.slice/memory.usage_in_bytes", "1\n");
  EXPECT_EQ(cgroup_memory_headroom(r.dir()), 412 * kMiB);
  r.put("sys/fs/cgroup/memory/system.slice/reveal-agent.service/memory.stat",
        "cache 9\ntotal_inactive_file " + std::to_string(50 * kMiB) + "\n");
  EXPECT_EQ(cgroup_memory_headroom(r.dir()), 462 * kMiB);
  // The unified tree's own limit, when tighter, wins.
  r.put("sys/fs/cgroup/unified/system.slice/reveal-agent.service/memory.max", std::to_string(300 * kMiB) + "\n");
  r.put("sys/fs/cgroup/unified/system.slice/reveal-agent.service/memory.current", std::to_string(100 * kMiB) + "\n");
  EXPECT_EQ(cgroup_memory_headroom(r.dir()), 200 * kMiB);
}

TEST(MemoryHeadroom, NoLimitsOrUnreadableOrHostileFilesImposeNothing) {
  Root r;
  EXPECT_EQ(cgroup_memory_headroom(r.dir()), kNone);  // no /proc/self/cgroup
  r.put("sys/fs/cgroup/cgroup.controllers", "memory\n");
  r.put("proc/self/cgroup", "0::/a\nnonsense\n0::relative\n0::/../../etc\n");
  EXPECT_EQ(cgroup_memory_headroom(r.dir()), kNone);  // no memory.max anywhere
  r.put("sys/fs/cgroup/a/memory.max", "-5\n");
  EXPECT_EQ(cgroup_memory_headroom(r.dir()), kNone);
  r.put("sys/fs/cgroup/a/memory.max", "99999999999999999999999\n");
  EXPECT_EQ(cgroup_memory_headroom(r.dir()), kNone);
  r.put("sys/fs/cgroup/a/memory.max", "99999999999999999999\n");  // 20 digits, over 2^64
  EXPECT_EQ(cgroup_memory_headroom(r.dir()), kNone);
  r.put("sys/fs/cgroup/a/memory.max", "+5\n");
  EXPECT_EQ(cgroup_memory_headroom(r.dir()), kNone);
  r.put("sys/fs/cgroup/a/memory.max", std::to_string(64 * kMiB));  // no memory.current: all of it
  EXPECT_EQ(cgroup_memory_headroom(r.dir()), 64 * kMiB);
}

TEST(MemoryHeadroom, ThisProcessHasSomeAndNoMoreThanTheHostsMemory) {
  const std::uint64_t h = memory_headroom();
  EXPECT_GT(h, 0u);
  EXPECT_LE(h, std::uint64_t(sysconf(_SC_PHYS_PAGES)) * std::uint64_t(sysconf(_SC_PAGESIZE)));
}

}  // namespace
}  // namespace reveal
