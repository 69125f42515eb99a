// reveal_tenant_scan_cost: CPU and wall time of one tenant scan (a walk of the cgroup v2 tree
// and 4 files per leaf cgroup, src/telemetry/cgroup/tenants.h) and the encoded size of its
// store row, as `reveal record` and the agent pay them every 5 s.
//   usage: reveal_tenant_scan_cost ROOT [SCANS=50]
//   ROOT: "/" (the live tree; bench/tenants/real_cgroups.sh makes N cgroups in it) or a fixture
//   tree (bench/bighost/make_bighost.py: 200 cgroups on tmpfs).
// Prints the median and p90 over SCANS scans, the tenants per scan and the bytes per stored scan.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

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
  // One store row of the last scan: a throwaway store in /tmp.
  const auto db = std::filesystem::temp_directory_path() / ("reveal-tenant-cost-" + std::to_string(::getpid()) + ".db");
  std::uintmax_t before = 0, after = 0;
  {
    reveal::RunMetadata meta;
    reveal::StoreWriter w(db, meta, {});
    w.append_tenant_scan(scan, scanner.paths());  // paths and a first row
    before = std::filesystem::file_size(db);
    for (int k = 0; k < 20; ++k) {
      scan.t_unix_ns += 5'000'000'000;
      w.append_tenant_scan(scan, scanner.paths());
    }
    w.finish(0, 0);
    after = std::filesystem::file_size(db);
  }
  reveal::remove_store_files(db);
  std::printf("tenants per scan %zu (skipped %llu)\n", scan.ids.size(), (unsigned long long)scanner.skipped());
  std::printf("scan cpu us: median %.0f p90 %.0f; wall us: median %.0f p90 %.0f (%d scans)\n", pct(cpu_us, 0.5),
              pct(cpu_us, 0.9), pct(wall_us, 0.5), pct(wall_us, 0.9), n);
  std::printf("at one scan every 5 s: %.3f %% of a core\n", pct(cpu_us, 0.5) / 5e6 * 100);
  std::printf("store: about %.0f bytes per scan on disk (20 scans, page-rounded)\n", double(after - before) / 20.0);
  return 0;
}
