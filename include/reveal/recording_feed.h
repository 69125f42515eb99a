// A recording read in pieces (issue #19): what `reveal detect --streaming` pushes through the
// agent's detector, from a Recording already in memory (MemoryFeed) or from a store read a
// chunk at a time (StoreFeed, over reveal/store_reader.h), so a week of one host is analysed
// in the memory of a few chunks and a few minutes of tenant scans.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "reveal/matrix.h"
#include "reveal/recording.h"

namespace reveal {

class StoreReader;

// One piece of a recording's samples: t_unix_ns.size() rows of the feed's channels.
struct SampleBlock {
  std::vector<std::int64_t> t_unix_ns;
  Matrix values;  // t_unix_ns.size() × channels; raw values, NaN = gap
};

class RecordingFeed {
 public:
  virtual ~RecordingFeed() = default;
  virtual const RunMetadata& meta() const = 0;
  virtual const std::vector<ChannelInfo>& channels() const = 0;
  virtual const std::vector<Event>& events() const = 0;  // all of them, in time order
  // Samples the recording holds, at most (for progress; 0 = unknown).
  virtual std::size_t samples_hint() const = 0;
  // The next samples in time order, overwriting `out` (its capacity reused); false, `out`
  // empty, at the end. Never an empty block with true.
  virtual bool next_samples(SampleBlock& out) = 0;
  // Tenant scans (reveal/tenants.h): whether the recording holds any, their paths by id, and
  // those stamped at or before `until` not given yet, inserted into `out` (the caller's window)
  // in time order. After a clock step back inside a stored row, a scan stamped at or before
  // `until` may wait behind a later-stamped one of its row until `until` passes that one.
  virtual bool has_tenant_scans() const = 0;
  virtual const std::vector<std::string>& tenant_paths() const = 0;
  virtual void tenant_scans_until(std::int64_t until, std::vector<TenantScan>& out) = 0;
};

// A Recording in memory (not copied: it must outlive the feed), in blocks of `block_rows`.
class MemoryFeed final : public RecordingFeed {
 public:
  explicit MemoryFeed(const Recording& run, std::size_t block_rows = 128) : run_(run), block_rows_(block_rows) {}
  const RunMetadata& meta() const override { return run_.meta; }
  const std::vector<ChannelInfo>& channels() const override { return run_.channels; }
  const std::vector<Event>& events() const override { return run_.events; }
  std::size_t samples_hint() const override { return run_.t_unix_ns.size(); }
  bool next_samples(SampleBlock& out) override;
  bool has_tenant_scans() const override { return !run_.tenants.scans.empty(); }
  const std::vector<std::string>& tenant_paths() const override { return run_.tenants.paths; }
  void tenant_scans_until(std::int64_t until, std::vector<TenantScan>& out) override;

 private:
  const Recording& run_;
  std::size_t block_rows_;
  std::size_t next_row_ = 0, next_scan_ = 0;
};

// A store read a chunk at a time (StoreReader): events and tenant paths are read whole at open
// (a store holds few), samples and tenant scans as they are asked for; the configuration table
// is not read (streaming detection does not use it; load_recording() fails on a corrupt one
// where this does not). Throws StoreError as StoreReader does: at open, from next_samples() on
// a corrupt chunk, from tenant_scans_until() on a failed read (a row that does not decode is
// skipped).
class StoreFeed final : public RecordingFeed {
 public:
  explicit StoreFeed(const std::filesystem::path& path);
  ~StoreFeed() override;
  const RunMetadata& meta() const override { return meta_; }
  const std::vector<ChannelInfo>& channels() const override;
  const std::vector<Event>& events() const override { return events_; }
  std::size_t samples_hint() const override { return hint_; }
  bool next_samples(SampleBlock& out) override;
  bool has_tenant_scans() const override { return has_scans_; }
  const std::vector<std::string>& tenant_paths() const override { return paths_; }
  void tenant_scans_until(std::int64_t until, std::vector<TenantScan>& out) override;

 private:
  std::unique_ptr<StoreReader> reader_;
  RunMetadata meta_;
  std::vector<Event> events_;
  std::vector<std::string> paths_;
  std::size_t hint_ = 0;
  bool has_scans_ = false;
  std::vector<TenantScan> row_;      // the last stored row read, scans not yet given
  std::size_t row_at_ = 0;           // the first of them
  bool rows_done_ = false;
};

// Inserts `scans` (each in time order or not) into `window`, kept in time order.
void insert_scans(std::vector<TenantScan>& window, std::vector<TenantScan>&& scans);

}  // namespace reveal
