// Small-file helpers for the configuration snapshot; see config_files.h.
#include "telemetry/host_config/config_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "telemetry/file_reader.h"

namespace reveal::telemetry::config {

std::optional<std::string> read_file(const std::filesystem::path& path, std::size_t max_bytes) {
  // Non-blocking, and regular files only: a FIFO or device planted in a root (a crafted --root,
  // a container's bind mount) must not hang the snapshot; /proc and /sys files are regular.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  UniqueFd guard(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::string text;
  char buf[4096];
  while (text.size() < max_bytes) {
    const ssize_t n = ::read(fd, buf, std::min(sizeof buf, max_bytes - text.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;  // e.g. EINVAL from a down NIC's "speed"
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

std::optional<std::string> read_value(const std::filesystem::path& path) {
  auto text = read_file(path, 16384);
  if (!text) return std::nullopt;
  std::string_view v = trim(*text);
  if (v.empty()) return std::nullopt;
  return std::string(v);
}

std::string bracketed_choice(std::string_view text) {
  const auto open = text.find('[');
  const auto close = open == std::string_view::npos ? open : text.find(']', open);
  if (close == std::string_view::npos) return std::string(trim(text));
  return std::string(trim(text.substr(open + 1, close - open - 1)));
}

std::vector<std::string> list_dir(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void put_value(ConfigSnapshot& out, const std::string& key, const std::filesystem::path& path) {
  if (auto v = read_value(path)) out[key] = std::move(*v);
}

}  // namespace reveal::telemetry::config
