// One recording's writes to its store; contract in reveal/recorder.h.
#include "reveal/recorder.h"

#include <algorithm>
#include <limits>

#include "reveal/host_config.h"
#include "telemetry/cgroup/tenants.h"

namespace reveal {

Recorder::Recorder(const std::filesystem::path& path, const RunMetadata& meta,
                   const std::vector<ChannelInfo>& channels)
    : store_(path, meta, channels) {}

Recorder::Recorder(const std::filesystem::path& path, const RunMetadata& meta,
                   const std::vector<ChannelInfo>& channels, const std::filesystem::path& config_root,
                   std::size_t config_every_samples, StoreOpen mode)
    : store_(path, meta, channels, mode),
      config_(std::make_unique<ConfigWatcher>(config_root, config_every_samples)) {
  if (!store_.continuation().continued) {
    store_.append_config(meta.start_unix_ns, config_->snapshot());
    return;
  }
  auto changes = diff_config(store_.stored_config(), config_->snapshot(), meta.start_unix_ns);
  store_.append_config_changes(changes);
  for (const auto& c : changes) store_.append_event(config_event(c));
}

Recorder::~Recorder() = default;

void Recorder::append(std::int64_t t_unix_ns, std::span<const double> row, std::span<const Event> events) {
  store_.append(t_unix_ns, row);
  for (const auto& e : events) store_.append_event(e);
  if (tenants_ && t_unix_ns >= next_tenant_scan_ns_) scan_tenants(t_unix_ns);
  if (!config_) return;
  // Usually no change: an empty vector, nothing allocated.
  if (auto changes = config_->tick(t_unix_ns); !changes.empty()) {
    ++config_version_;
    store_.append_config_changes(changes);
    for (const auto& c : changes) store_.append_event(config_event(c));
  }
}

void Recorder::append_event(const Event& e) { store_.append_event(e); }

const ConfigSnapshot* Recorder::config() const { return config_ ? &config_->snapshot() : nullptr; }

bool Recorder::enable_tenant_scans(const std::filesystem::path& root, std::chrono::nanoseconds period,
                                   std::string& reason) {
  auto scanner = std::make_unique<telemetry::TenantScanner>();
  if (!scanner->open(root, reason)) return false;
  tenants_ = std::move(scanner);
  tenant_period_ns_ = std::max<std::int64_t>(1, period.count());
  next_tenant_scan_ns_ = std::numeric_limits<std::int64_t>::min();
  return true;
}

void Recorder::scan_tenants(std::int64_t t) {
  // A clock that jumped back by more than a period restarts the schedule from here.
  next_tenant_scan_ns_ = t + tenant_period_ns_;
  tenants_->scan(t, scan_);
  const auto& paths = tenants_->paths();
  recent_tenants_.paths.insert(recent_tenants_.paths.end(), paths.begin() + std::ptrdiff_t(recent_tenants_.paths.size()),
                               paths.end());
  auto& scans = recent_tenants_.scans;
  // Time order even across a clock step back: scans newer than this one are dropped.
  while (!scans.empty() && scans.back().t_unix_ns >= t) scans.pop_back();
  const std::int64_t keep_from = t - std::int64_t(kRecentTenantsS * 1e9);
  std::size_t old = 0;
  while (old < scans.size() && scans[old].t_unix_ns < keep_from) ++old;
  scans.erase(scans.begin(), scans.begin() + std::ptrdiff_t(old));
  scans.push_back(scan_);
  store_.append_tenant_scan(scan_, paths);
}

void Recorder::finish(std::int64_t end_unix_ns, int exit_code) { store_.finish(end_unix_ns, exit_code); }

}  // namespace reveal
