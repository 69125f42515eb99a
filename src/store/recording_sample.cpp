// A store's samples in evenly spread slices; contract in include/reveal/store_reader.h.
#include <algorithm>

#include "reveal/store.h"
#include "reveal/store_reader.h"

namespace reveal {

std::vector<std::pair<std::size_t, std::size_t>> spread_slices(std::size_t rows, std::size_t budget, std::size_t len,
                                                               double phase) {
  if (rows <= budget) return {{0, rows}};
  len = std::max<std::size_t>(1, std::min(len, rows));
  const std::size_t n = std::max<std::size_t>(1, budget / len);
  if (!(phase >= 0 && phase < 1)) phase = 0.5;
  std::vector<std::pair<std::size_t, std::size_t>> out;
  out.reserve(n);
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t centre = phase == 0.5 ? (2 * j + 1) * rows / (2 * n)
                                            : std::size_t((double(j) + phase) * double(rows) / double(n));
    const std::size_t first = std::min(centre - std::min(centre, len / 2), rows - len);
    out.emplace_back(first, len);
  }
  return out;
}

std::vector<Recording> load_recording_slices(const std::filesystem::path& path, std::size_t budget, std::size_t len) {
  // First pass, times only (no channel decoded): how many samples.
  std::size_t rows = 0;
  SampleBlock block;
  {
    StoreReader times(path, [](const ChannelInfo&) { return false; });
    times.begin_samples();
    while (times.next_samples(block)) rows += block.t_unix_ns.size();
  }
  if (rows <= budget) return {load_recording(path)};
  const auto slices = spread_slices(rows, budget, len);
  StoreReader reader(path);
  std::vector<Recording> out(slices.size());
  for (auto& r : out) {
    r.meta = reader.meta();
    r.channels = reader.channels();
    r.values = Matrix(0, r.channels.size());
  }
  {
    std::vector<ConfigChange> changes;
    ConfigSnapshot at_start;
    reader.config(at_start, changes);
    for (auto& r : out) r.config = at_start;
  }
  // Second pass: each sample goes to the slices that hold its index (slices are in order).
  std::size_t k = 0, first_slice = 0;
  reader.begin_samples();
  while (reader.next_samples(block)) {
    for (std::size_t i = 0; i < block.t_unix_ns.size(); ++i, ++k) {
      while (first_slice < slices.size() && slices[first_slice].first + slices[first_slice].second <= k) ++first_slice;
      for (std::size_t s = first_slice; s < slices.size() && slices[s].first <= k; ++s) {
        if (k >= slices[s].first + slices[s].second) continue;
        out[s].t_unix_ns.push_back(block.t_unix_ns[i]);
        out[s].values.append_row(block.values.row(i));
      }
    }
  }
  std::erase_if(out, [](const Recording& r) { return r.t_unix_ns.empty(); });
  for (auto& r : out) {
    r.meta.start_unix_ns = r.t_unix_ns.front();
    r.meta.end_unix_ns = r.t_unix_ns.back();
    r.meta.complete = true;
  }
  return out;
}

}  // namespace reveal
