// One recording's writes to its store; contract in reveal/recorder.h.
#include "reveal/recorder.h"

#include "reveal/host_config.h"

namespace reveal {

Recorder::Recorder(const std::filesystem::path& path, const RunMetadata& meta,
                   const std::vector<ChannelInfo>& channels)
    : store_(path, meta, channels) {}

Recorder::Recorder(const std::filesystem::path& path, const RunMetadata& meta,
                   const std::vector<ChannelInfo>& channels, const std::filesystem::path& config_root,
                   std::size_t config_every_samples)
    : store_(path, meta, channels),
      config_(std::make_unique<ConfigWatcher>(config_root, config_every_samples)) {
  store_.append_config(meta.start_unix_ns, config_->snapshot());
}

Recorder::~Recorder() = default;

void Recorder::append(std::int64_t t_unix_ns, std::span<const double> row, std::span<const Event> events) {
  store_.append(t_unix_ns, row);
  for (const auto& e : events) store_.append_event(e);
  if (!config_) return;
  // Usually no change: an empty vector, nothing allocated.
  if (auto changes = config_->tick(t_unix_ns); !changes.empty()) {
    store_.append_config_changes(changes);
    for (const auto& c : changes) store_.append_event(config_event(c));
  }
}

void Recorder::append_event(const Event& e) { store_.append_event(e); }

void Recorder::finish(std::int64_t end_unix_ns, int exit_code) { store_.finish(end_unix_ns, exit_code); }

}  // namespace reveal
