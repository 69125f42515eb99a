// Driver versions: every loaded module that declares a version, and the NVIDIA kernel
// module's banner (see reveal/host_config.h).
#include "telemetry/host_config/config_files.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry::config {

void read_driver_config(const std::filesystem::path& root, ConfigSnapshot& out) {
  const auto modules = root / "sys/module";
  // Built-in and most in-tree modules have no version file; mlx5_core, nvidia, ena... do.
  for (const auto& m : list_dir(modules)) put_value(out, "driver." + m + ".version", modules / m / "version");
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 ..."
  if (auto text = read_file(root / "proc/driver/nvidia/version", 4096)) {
    std::string_view rest = *text;
    std::string_view first = trim(next_line(rest));
    if (!first.empty()) out["driver.nvidia.proc_version"] = std::string(first);
  }
}

}  // namespace reveal::telemetry::config
