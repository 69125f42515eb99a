#include "telemetry/sysfs/striped_refresh.h"

#include <chrono>

namespace reveal::telemetry {

std::int64_t StripedRefresh::steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace reveal::telemetry
