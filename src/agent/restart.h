// `reveal agent` restarted: it continues its rolling store (reveal/store.h, StoreOpen::append)
// and fits its reference from what the store holds instead of warming up again.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "reveal/recording.h"
#include "reveal/store.h"

namespace reveal {
class StreamingDetector;
}

namespace reveal::agent {

// The one-line note of a continued store: samples it held, how long nobody sampled
// (`now_unix_ns` − its last sample), samples recovered from a killed agent's head log, channels
// added and no longer sampled.
std::string continuation_note(const StoreContinuation& c, std::int64_t now_unix_ns);

// What prime_from_store did.
struct Priming {
  std::size_t rows = 0;  // stored samples fed to the detector (0: none)
  std::string skipped;   // why none was, when that is worth saying ("" otherwise)
};

// Feeds the detector (StreamingDetector::prime, then finish_priming) the samples the store at
// `store` holds from `history` before its last sample on, for the detector's `channels` (matched
// by name; a channel the store lacks reads NaN). Nothing is fed when the last stored sample is
// more than `history` before `now_unix_ns` (that history no longer describes the host) or the
// store holds no sample. Reads at most `history` / `interval` + one chunk of samples.
// Throws StoreError when the store cannot be read.
Priming prime_from_store(StreamingDetector& detector, const std::filesystem::path& store,
                         const std::vector<ChannelInfo>& channels, std::int64_t last_t_unix_ns,
                         std::int64_t now_unix_ns, std::chrono::nanoseconds history);

}  // namespace reveal::agent
