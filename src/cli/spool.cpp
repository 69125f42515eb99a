// The temporary file of named pieces; contract in spool.h.
#include "spool.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace reveal::cli {
namespace {

std::runtime_error failed(const char* what) {
  return std::runtime_error(std::string("temporary file: ") + what + ": " + std::strerror(errno ? errno : EIO));
}

}  // namespace

static_assert(sizeof(off_t) >= 8, "a spool may pass 2 GiB: needs a 64-bit off_t");

Spool::Spool() {
  // In $TMPDIR (std::tmpfile() would ignore it: glibc's uses /tmp, a tmpfs charged to the
  // memory cgroup in many containers), unlinked at once.
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/reveal-spool-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) throw failed(("cannot create one in " + path.substr(0, path.size() - 20) + " (set TMPDIR)").c_str());
  ::unlink(path.c_str());
  f_ = ::fdopen(fd, "w+b");
  if (!f_) {
    ::close(fd);
    throw failed("cannot open it");
  }
}

Spool::~Spool() {
  if (f_) std::fclose(f_);
}

void Spool::add(const std::string& name, const std::function<void(const Writer&)>& produce) {
  if (pieces_.count(name)) throw std::runtime_error("temporary file: '" + name + "' written twice");
  if (fseeko(f_, off_t(end_), SEEK_SET) != 0) throw failed("cannot seek");
  const std::int64_t from = end_;
  produce([this](std::string_view piece) {
    errno = 0;
    if (!piece.empty() && std::fwrite(piece.data(), 1, piece.size(), f_) != piece.size()) throw failed("cannot write");
    end_ += std::int64_t(piece.size());
  });
  pieces_[name] = {from, end_ - from};
}

void Spool::replay(const std::string& name, const Writer& write) {
  const auto it = pieces_.find(name);
  if (it == pieces_.end()) throw std::runtime_error("temporary file: no piece '" + name + "'");
  errno = 0;
  if (std::fflush(f_) != 0) throw failed("cannot write");
  if (fseeko(f_, off_t(it->second.first), SEEK_SET) != 0) throw failed("cannot seek");
  std::vector<char> buf(std::size_t(1) << 20);
  for (std::int64_t left = it->second.second; left > 0;) {
    const std::size_t want = std::size_t(std::min<std::int64_t>(left, std::int64_t(buf.size())));
    errno = 0;
    if (std::fread(buf.data(), 1, want, f_) != want) throw failed("cannot read back");
    write(std::string_view(buf.data(), want));
    left -= std::int64_t(want);
  }
}

}  // namespace reveal::cli
