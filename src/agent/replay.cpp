// Real-time replay of a recording: see replay.h.
#include "agent/replay.h"

#include <time.h>

#include <algorithm>
#include <vector>

#include "reveal/sampler.h"

namespace reveal::agent {

void replay_in_real_time(const Recording& rec, const std::atomic<bool>& stop,
                                const std::function<void()>& between_samples, const ReplaySample& on_sample) {
  const std::int64_t mono0 = monotonic_ns(), wall0 = realtime_ns(), rec0 = rec.t_unix_ns.front();
  std::size_t ev = 0;
  std::vector<Event> events;
  for (std::size_t i = 0; i < rec.t_unix_ns.size() && !stop.load(); ++i) {
    const std::int64_t offset = rec.t_unix_ns[i] - rec0;
    const std::int64_t due = mono0 + offset;
    while (!stop.load()) {
      const std::int64_t now = monotonic_ns();
      if (now >= due) break;
      const std::int64_t nap = std::min<std::int64_t>(due - now, 200'000'000);
      timespec ts{time_t(nap / 1'000'000'000), long(nap % 1'000'000'000)};
      nanosleep(&ts, nullptr);
    }
    if (stop.load()) break;
    between_samples();
    events.clear();
    for (; ev < rec.events.size() && rec.events[ev].t_unix_ns <= rec.t_unix_ns[i]; ++ev) {
      Event e = rec.events[ev];
      e.t_unix_ns = wall0 + (e.t_unix_ns - rec0);
      events.push_back(std::move(e));
    }
    on_sample(wall0 + offset, rec.values.row(i), events);
  }
}

}  // namespace reveal::agent
