// OutputFile: see output_file.h.
#include "output_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "commands.h"
#include "reveal/baseline_model.h"

namespace reveal::cli {
namespace {

namespace fs = std::filesystem;

bool is_sqlite(const std::string& path) {
  char head[16] = {};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  const bool sq = std::fread(head, 1, sizeof head, f) == sizeof head && std::memcmp(head, "SQLite format 3", 16) == 0;
  std::fclose(f);
  return sq;
}

}  // namespace

void check_not_input(const std::string& out, const std::vector<std::string>& inputs, const std::string& flag) {
  for (const auto& in : inputs) {
    std::error_code ec;
    if (fs::equivalent(out, in, ec) && !ec)
      throw UsageError(flag + " " + out + ": is also an input (" + in + "); write the output to another file");
  }
}

OutputFile::OutputFile(std::string path, const std::vector<std::string>& inputs, const std::string& flag)
    : path_(std::move(path)) {
  if (path_.empty()) throw UsageError(flag + ": empty path (use - for standard output)");
  // The streams themselves, so that a file the shell opened for appending is appended to.
  if (path_ == "-" || path_ == "/dev/stdout" || path_ == "/dev/stderr") {
    to_stdout_ = path_ != "/dev/stderr";
    f_ = to_stdout_ ? stdout : stderr;
    return;
  }
  check_not_input(path_, inputs, flag);
  // What is replaced: the file itself, or what a symbolic link leads to (the link stays). Under
  // /dev or /proc (/dev/stderr, /proc/self/fd/N: maybe a file the shell opened for appending),
  // it is written in place.
  std::error_code ec;
  std::string target;
  fs::path hop = fs::absolute(path_, ec).lexically_normal();
  for (int hops = 0; !ec && hops < 40; ++hops) {
    const std::string h = hop.string();
    if (h.rfind("/dev/", 0) == 0 || h.rfind("/proc/", 0) == 0) break;
    const auto ls = fs::symlink_status(hop, ec);
    if (ls.type() == fs::file_type::not_found || (!ec && !fs::is_symlink(ls))) {
      target = h;  // a new file (also where a dangling link leads), or an existing one
      break;
    }
    if (ec) break;
    const fs::path next = fs::read_symlink(hop, ec);
    hop = (next.is_absolute() ? next : hop.parent_path() / next).lexically_normal();
  }
  const auto st = fs::status(path_, ec);
  const bool exists = !ec && fs::exists(st);
  if (exists && fs::is_directory(st)) throw std::runtime_error(path_ + ": is a directory; refusing to write over it");
  if (exists && fs::is_regular_file(st) && (is_sqlite(path_) || is_model_file(path_)))
    throw std::runtime_error(path_ + ": is a Reveal store or model; refusing to overwrite it");
  if (target.empty() || (exists && !fs::is_regular_file(st))) {
    // A device, a pipe or a link into /proc: written in place; renaming over it would replace
    // /dev/null for everyone.
    f_ = std::fopen(path_.c_str(), "wb");
    if (!f_) throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(errno));
    return;
  }
  target_ = target;
  tmp_ = target + ".tmp";
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (!f_) throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(errno));
}

OutputFile::~OutputFile() {
  if (committed_ || !f_) return;
  if (!standard_stream()) std::fclose(f_);
  if (!tmp_.empty()) std::remove(tmp_.c_str());
}

void OutputFile::fail(int err) {
  const std::string msg = "cannot write " + display_name() + ": " + std::strerror(err ? err : EIO);
  if (!standard_stream()) {
    std::fclose(f_);
    if (!tmp_.empty()) std::remove(tmp_.c_str());
  }
  f_ = nullptr;
  throw std::runtime_error(msg);
}

void OutputFile::write(std::string_view text) {
  if (!f_) throw std::logic_error("OutputFile::write after commit or failure");
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), f_) != text.size()) fail(errno);
}

void OutputFile::commit() {
  if (!f_) throw std::logic_error("OutputFile::commit twice or after a failure");
  errno = 0;
  if (std::fflush(f_) != 0 || std::ferror(f_)) fail(errno);
  if (!standard_stream()) {
    std::FILE* f = f_;
    f_ = nullptr;
    errno = 0;
    if (std::fclose(f) != 0) {
      const int e = errno;
      if (!tmp_.empty()) std::remove(tmp_.c_str());
      throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(e ? e : EIO));
    }
    if (!tmp_.empty() && std::rename(tmp_.c_str(), target_.c_str()) != 0) {
      const int e = errno;
      std::remove(tmp_.c_str());
      throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(e));
    }
  }
  committed_ = true;
}

void write_file(const std::string& path, const std::string& text, const std::vector<std::string>& inputs,
                const std::string& flag) {
  OutputFile out(path, inputs, flag);
  out.write(text);
  out.commit();
}

}  // namespace reveal::cli
