// ConfigWatcher: periodic re-read of the configuration snapshot; see reveal/host_config.h.
#include "reveal/host_config.h"

namespace reveal {

ConfigWatcher::ConfigWatcher(std::filesystem::path root, std::size_t every_n_ticks)
    : root_(std::move(root)), every_n_(every_n_ticks ? every_n_ticks : 1), current_(read_config(root_)) {}

std::vector<ConfigChange> ConfigWatcher::tick(std::int64_t t_unix_ns) {
  if (++ticks_ % every_n_ != 0) return {};
  ConfigSnapshot now = read_config(root_);
  auto changes = diff_config(current_, now, t_unix_ns);
  if (!changes.empty()) current_ = std::move(now);
  return changes;
}

}  // namespace reveal
