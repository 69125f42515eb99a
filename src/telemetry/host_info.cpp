#include "reveal/host_info.h"

#include <fstream>
#include <sstream>
#include <string>

namespace reveal {
namespace {
std::string first_line(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::string s;
  if (!std::getline(f, s) || s.empty()) return "unknown";
  return s;
}
}  // namespace

void fill_host_info(const std::filesystem::path& root, RunMetadata& meta) {
  meta.hostname = first_line(root / "proc/sys/kernel/hostname");
  meta.kernel = first_line(root / "proc/sys/kernel/osrelease");
  meta.cpu_model = "unknown";
  meta.cores = 0;
  std::ifstream f(root / "proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("processor", 0) == 0) ++meta.cores;
    if (meta.cpu_model == "unknown" && line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) meta.cpu_model = line.substr(colon + 2);
    }
  }
}

}  // namespace reveal
