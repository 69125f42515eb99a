// A recording read in pieces, from memory or from a store; contract in
// include/reveal/recording_feed.h.
#include "reveal/recording_feed.h"

#include <algorithm>
#include <limits>

#include "reveal/store_reader.h"

namespace reveal {

void insert_scans(std::vector<TenantScan>& window, std::vector<TenantScan>&& scans) {
  const auto by_time = [](const TenantScan& a, const TenantScan& b) { return a.t_unix_ns < b.t_unix_ns; };
  for (auto& s : scans) {
    if (window.empty() || !by_time(s, window.back())) {
      window.push_back(std::move(s));
      continue;
    }
    window.insert(std::upper_bound(window.begin(), window.end(), s, by_time), std::move(s));
  }
  scans.clear();
}

bool MemoryFeed::next_samples(SampleBlock& out) {
  out.t_unix_ns.clear();
  const std::size_t n = run_.t_unix_ns.size();
  const std::size_t cols = run_.values.cols();
  out.values.reset(cols);
  if (next_row_ >= n) {
    if (cols == 0) out.values = Matrix(0, 0);
    return false;
  }
  const std::size_t end = std::min(n, next_row_ + std::max<std::size_t>(block_rows_, 1));
  out.t_unix_ns.assign(run_.t_unix_ns.begin() + std::ptrdiff_t(next_row_), run_.t_unix_ns.begin() + std::ptrdiff_t(end));
  if (cols == 0)
    out.values = Matrix(end - next_row_, 0);
  else
    for (std::size_t i = next_row_; i < end; ++i) out.values.append_row(run_.values.row(i));
  next_row_ = end;
  return true;
}

void MemoryFeed::tenant_scans_until(std::int64_t until, std::vector<TenantScan>& out) {
  const auto& scans = run_.tenants.scans;  // in time order (load_recording sorts them)
  std::vector<TenantScan> add;
  for (; next_scan_ < scans.size() && scans[next_scan_].t_unix_ns <= until; ++next_scan_) add.push_back(scans[next_scan_]);
  insert_scans(out, std::move(add));
}

StoreFeed::StoreFeed(const std::filesystem::path& path) : reader_(std::make_unique<StoreReader>(path)) {
  meta_ = reader_->meta();
  events_ = reader_->events();
  paths_ = reader_->tenant_paths();
  has_scans_ = reader_->has_tenant_scans();
  hint_ = static_cast<std::size_t>(reader_->claimed_samples(std::numeric_limits<std::int64_t>::min(),
                                                            std::numeric_limits<std::int64_t>::max()));
  reader_->begin_samples();
  reader_->begin_tenant_scans();
}

StoreFeed::~StoreFeed() = default;

const std::vector<ChannelInfo>& StoreFeed::channels() const { return reader_->channels(); }

bool StoreFeed::next_samples(SampleBlock& out) {
  if (!reader_->next_samples(out)) return false;
  // A store whose writer never finished is dated to its last sample, as load_recording() does.
  if (!meta_.complete) meta_.end_unix_ns = out.t_unix_ns.back();
  return true;
}

void StoreFeed::tenant_scans_until(std::int64_t until, std::vector<TenantScan>& out) {
  // Stored rows come in the order of their first scans: once a row starts after `until`, so do
  // all the later ones.
  std::vector<TenantScan> add;
  while (true) {
    for (; row_at_ < row_.size() && row_[row_at_].t_unix_ns <= until; ++row_at_) add.push_back(std::move(row_[row_at_]));
    if (row_at_ < row_.size() || rows_done_) break;
    row_at_ = 0;
    if (!reader_->next_tenant_scans(row_)) {
      rows_done_ = true;
      break;
    }
    if (row_.front().t_unix_ns > until) break;
  }
  insert_scans(out, std::move(add));
}

}  // namespace reveal
