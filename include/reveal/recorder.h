// Recorder: everything a recording process writes to its store, in one place. `reveal record`
// and `reveal agent` both record through it.
//
// What goes into the store (reveal/store.h), and when:
//   construction  the run metadata and the channel table (a StoreWriter at `path`), then, with
//                 configuration tracking on, the configuration snapshot stamped
//                 meta.start_unix_ns (one transaction);
//   append()      one sample, then the events that came with it (in order), then one
//                 ConfigWatcher tick: each changed key as a configuration row and as a
//                 "config_change" event (reveal/host_config.h config_event);
//                 With tenant scans on (enable_tenant_scans), also a TenantScanner walk of the
//                 cgroup v2 tree whenever `period` has passed since the last one (sample time),
//                 stored through StoreWriter::append_tenant_scan (a tenant_scans row per 12
//                 scans) and kept in recent_tenants();
//   append_event() one more event (the agent's incident notes);
//   finish()      end time and exit code; the store is left one self-contained file.
//
// Cost: append() allocates nothing between chunk commits, unless the configuration is due to
// be re-read (every `config_every_samples` samples) or an event is passed; then it costs what
// StoreWriter::append_event and ConfigWatcher::tick cost.
// Errors: StoreError (one line naming the file) from the store, as StoreWriter throws them. A
// failed append() may have written part of its sample's data (the sample, some events); the
// caller decides whether to go on.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "reveal/recording.h"
#include "reveal/store.h"

namespace reveal {

class ConfigWatcher;
namespace telemetry {
class TenantScanner;
}

class Recorder {
 public:
  // No configuration tracking: samples and events only.
  Recorder(const std::filesystem::path& path, const RunMetadata& meta, const std::vector<ChannelInfo>& channels);
  // Configuration tracking: reads the configuration under `config_root` ("/" or a fixture tree)
  // now, stores it as the snapshot, and re-reads it every `config_every_samples` appends (0 counts
  // as 1).
  // With StoreOpen::append a store already at `path` is continued (StoreWriter's contract;
  // store().continuation() says what was found) and, instead of a snapshot, the keys whose
  // value differs from the store's last configuration are stored as changes stamped
  // meta.start_unix_ns, each with its "config_change" event (what changed while no recorder ran).
  Recorder(const std::filesystem::path& path, const RunMetadata& meta, const std::vector<ChannelInfo>& channels,
           const std::filesystem::path& config_root, std::size_t config_every_samples,
           StoreOpen mode = StoreOpen::replace);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // One sample (row.size() = the channel count), stamped t_unix_ns, with the events that came
  // with it; then the configuration tick.
  void append(std::int64_t t_unix_ns, std::span<const double> row, std::span<const Event> events = {});
  void append_event(const Event& e);
  // Tenant scans (reveal/tenants.h): walks the cgroup v2 hierarchy under `root` at the next
  // append and then every `period` of sample time. Returns false, with `reason` set, when the
  // host has no v2 hierarchy (then nothing is scanned). A walk costs about 10 us per tenant.
  bool enable_tenant_scans(const std::filesystem::path& root, std::chrono::nanoseconds period, std::string& reason);
  // The scans of the last kRecentTenantsS seconds (all paths seen so far): what an incident's
  // victims and aggressors are judged from while it is young (the agent).
  const TenantTimeline& recent_tenants() const { return recent_tenants_; }
  static constexpr double kRecentTenantsS = 150.0;  // ≥ kTenantBeforeS + kTenantGuardS + kTenantAfterS + a scan
  // Records the end time and exit code (StoreWriter::finish).
  void finish(std::int64_t end_unix_ns, int exit_code);

  std::size_t samples_written() const { return store_.samples_written(); }
  // The configuration as last read (null without configuration tracking), and how many reads
  // so far found a change: the agent re-exposes the snapshot when that count moves.
  const ConfigSnapshot* config() const;
  std::uint64_t config_version() const { return config_version_; }
  // The store itself, for what only some recorders use (the agent's retention bound).
  StoreWriter& store() { return store_; }

 private:
  StoreWriter store_;
  std::unique_ptr<ConfigWatcher> config_;  // null: no configuration tracking
  std::uint64_t config_version_ = 0;
  void scan_tenants(std::int64_t t_unix_ns);
  std::unique_ptr<telemetry::TenantScanner> tenants_;  // null: no tenant scans
  std::int64_t tenant_period_ns_ = 0, next_tenant_scan_ns_ = 0;
  TenantScan scan_;
  TenantTimeline recent_tenants_;
};

}  // namespace reveal
