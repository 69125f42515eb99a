// Host facts stored with every run, read under a root directory like the probes:
// hostname (proc/sys/kernel/hostname), kernel (proc/sys/kernel/osrelease), CPU model
// ("model name" in proc/cpuinfo) and core count ("processor" entries). Missing files give
// "unknown" / 0, never an error.
#pragma once

#include <filesystem>

#include "reveal/recording.h"

namespace reveal {

void fill_host_info(const std::filesystem::path& root, RunMetadata& meta);

}  // namespace reveal
