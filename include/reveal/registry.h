// Probe registry (node_exporter style): every probe Reveal knows, by name.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "reveal/probe.h"

namespace reveal {

struct ProbeFactory {
  std::string name;  // equals Probe::name() of what make() returns
  bool enabled_by_default = true;
  std::function<std::unique_ptr<Probe>()> make;
};

// All registered probes, in a stable order (the order of channels in a recording).
const std::vector<ProbeFactory>& probe_registry();

}  // namespace reveal
