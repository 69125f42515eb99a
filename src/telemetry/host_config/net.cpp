// Network settings: per-interface MTU, speed, duplex, state and PCIe link; RDMA ports
// (see reveal/host_config.h).
#include "telemetry/host_config/config_files.h"

namespace reveal::telemetry::config {

void read_net_config(const std::filesystem::path& root, ConfigSnapshot& out) {
  const auto net = root / "sys/class/net";
  for (const auto& iface : list_dir(net)) {
    if (iface == "lo" || iface.find('.') == 0) continue;
    const auto dir = net / iface;
    const std::string key = "net." + iface + ".";
    // speed/duplex fail with EINVAL on virtual or down links: the keys are then omitted.
    for (const char* f : {"mtu", "speed", "duplex", "operstate"}) put_value(out, key + f, dir / f);
    // PCI NICs expose the PCIe link of their function under device/ (virtio ones do not).
    for (const char* f : {"current_link_speed", "current_link_width", "max_link_speed", "max_link_width"})
      put_value(out, key + "pcie." + f, dir / "device" / f);
  }
  const auto ib = root / "sys/class/infiniband";
  for (const auto& dev : list_dir(ib)) {
    const std::string key = "rdma." + dev + ".";
    put_value(out, key + "fw_ver", ib / dev / "fw_ver");
    const auto ports = ib / dev / "ports";
    for (const auto& port : list_dir(ports))
      for (const char* f : {"rate", "state", "phys_state", "link_layer"})
        put_value(out, key + "port" + port + "." + f, ports / port / f);
  }
}

}  // namespace reveal::telemetry::config
