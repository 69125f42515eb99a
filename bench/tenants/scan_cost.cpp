// reveal_tenant_scan_cost: CPU and wall time of one tenant scan (a walk of the cgroup v2 tree
// and 4 files per leaf cgroup, src/telemetry/cgroup/tenants.h) and the stored size of a scan,
// as `reveal record` and the agent pay them every 5 s.
//   usage: reveal_tenant_scan_cost ROOT [SCANS=50]
//   ROOT: "/" (the live tree; bench/tenants/real_cgroups.sh makes N cgroups in it) or a fixture
//   tree (bench/bighost/make_bighost.py: 200 cgroups on tmpfs).
// Prints the median and p90 over SCANS scans, the tenants per scan and the bytes per stored scan
// over 120 scans of the last one (10 rows of kTenantScansPerRow), 5 s apart: once with its
// counters as read (a fixture's do not move: every cgroup idle), once with every counter
// advancing by a random amount each scan (usage by up to 4 cores, each stall total by up to
// 0.2 s per 5 s: every cgroup busy), encoded (blob bytes) and on disk (page-rounded).
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "reveal/store.h"
#include "reveal/sampler.h"
#include "telemetry/cgroup/tenants.h"

namespace {
std::int64_t cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
double pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, std::size_t(q * double(v.size() - 1) + 0.5))];
}

std::int64_t blob_bytes(const std::filesystem::path& db) {
  sqlite3* h = nullptr;
  sqlite3_stmt* st = nullptr;
  std::int64_t n = 0;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK &&
      sqlite3_prepare_v2(h, "SELECT COALESCE(SUM(length(data)), 0) FROM tenant_scans", -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

struct StoreCost {
  double encoded, on_disk;  // bytes per scan
};

// A store of `first` alone, and one of `first` then `n` more scans from next(scan): the
// difference per scan (paths and the first row cancel out).
template <class Next>
StoreCost store_cost(const reveal::TenantScan& first, const std::vector<std::string>& paths, int n, Next next) {
  const auto db = std::filesystem::temp_directory_path() / ("reveal-tenant-cost-" + std::to_string(::getpid()) + ".db");
  std::uintmax_t size[2] = {};
  std::int64_t blobs[2] = {};
  for (int pass = 0; pass < 2; ++pass) {
    {
      reveal::RunMetadata meta;
      reveal::StoreWriter w(db, meta, {});
      reveal::TenantScan scan = first;
      w.append_tenant_scan(scan, paths);
      for (int k = 0; pass == 1 && k < n; ++k) {
        scan.t_unix_ns += 5'000'000'000;
        next(scan);
        w.append_tenant_scan(scan, paths);
      }
      w.finish(scan.t_unix_ns, 0);
    }
    size[pass] = std::filesystem::file_size(db);
    blobs[pass] = blob_bytes(db);
    reveal::remove_store_files(db);
  }
  return {double(blobs[1] - blobs[0]) / n, (double(size[1]) - double(size[0])) / n};
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: reveal_tenant_scan_cost ROOT [SCANS]\n");
    return 2;
  }
  const std::filesystem::path root = argv[1];
  const int n = argc > 2 ? std::max(1, std::atoi(argv[2])) : 50;
  reveal::telemetry::TenantScanner scanner;
  std::string why;
  if (!scanner.open(root, why)) {
    std::fprintf(stderr, "reveal_tenant_scan_cost: %s\n", why.c_str());
    return 1;
  }
  reveal::TenantScan scan;
  std::vector<double> cpu_us, wall_us;
  for (int k = 0; k < n; ++k) {
    const std::int64_t c0 = cpu_ns(), w0 = reveal::monotonic_ns();
    scanner.scan(reveal::realtime_ns(), scan);
    wall_us.push_back(double(reveal::monotonic_ns() - w0) * 1e-3);
    cpu_us.push_back(double(cpu_ns() - c0) * 1e-3);
  }
  // The stored size of the last scan: 120 more like it in throwaway stores in /tmp.
  constexpr int kStoreScans = 120;
  const StoreCost idle = store_cost(scan, scanner.paths(), kStoreScans, [](reveal::TenantScan&) {});
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(0, 1);
  const StoreCost busy = store_cost(scan, scanner.paths(), kStoreScans, [&](reveal::TenantScan& s) {
    for (auto& c : s.counters) {
      c.cpu_usage_us += std::floor(u(rng) * 2e7);
      for (double* stall : {&c.cpu_some_us, &c.memory_some_us, &c.io_some_us}) *stall += std::floor(u(rng) * 2e5);
    }
  });
  std::printf("tenants per scan %zu (skipped %llu)\n", scan.ids.size(), (unsigned long long)scanner.skipped());
  std::printf("scan cpu us: median %.0f p90 %.0f; wall us: median %.0f p90 %.0f (%d scans)\n", pct(cpu_us, 0.5),
              pct(cpu_us, 0.9), pct(wall_us, 0.5), pct(wall_us, 0.9), n);
  std::printf("at one scan every 5 s: %.3f %% of a core\n", pct(cpu_us, 0.5) / 5e6 * 100);
  std::printf("store, counters as read (idle): %.0f bytes per scan encoded, %.0f on disk (%d scans, %zu a row, page-rounded)\n",
              idle.encoded, idle.on_disk, kStoreScans, reveal::kTenantScansPerRow);
  std::printf("store, counters advancing (busy): %.0f bytes per scan encoded, %.0f on disk\n", busy.encoded, busy.on_disk);
  return 0;
}
