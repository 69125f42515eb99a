// OutputFile: see output_file.h.
#include "output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "commands.h"
#include "file_args.h"
#include "reveal/baseline_model.h"
#include "util/remove_on_signal.h"
#include "util/replace_target.h"

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

bool same_file(const struct stat& a, int fd) {
  struct stat b {};
  return ::fstat(fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

OutputFile::OutputFile(std::string path, const std::vector<std::string>& inputs, const std::string& flag,
                       bool model_ok)
    : path_(std::move(path)) {
  if (path_.empty()) throw UsageError(flag + ": empty path (use - for standard output)");
  if (path_ == "-") {
    stream_ = stdout;
    return;
  }
  check_not_flag(flag, path_);
  check_not_input(path_, inputs, flag);
  const auto cannot = [&](const std::string& why) { return std::runtime_error("cannot write " + path_ + ": " + why); };
  struct stat st {};
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists) {
    // Already one of our streams (/dev/stdout, /proc/self/fd/2, `-o x.html >x.html`): reopening
    // it would truncate what an appending redirection keeps.
    if (same_file(st, STDOUT_FILENO)) stream_ = stdout;
    else if (same_file(st, STDERR_FILENO)) stream_ = stderr;
    if (stream_) return;
    if (S_ISDIR(st.st_mode)) throw std::runtime_error(path_ + ": is a directory; refusing to write over it");
    if (S_ISREG(st.st_mode) && (is_sqlite(path_) || (!model_ok && is_model_file(path_))))
      throw std::runtime_error(path_ + ": is a Reveal store or model; refusing to overwrite it");
  }
  // The file to replace (a link stays a link); under /dev or /proc: written in place.
  try {
    if (const auto t = replace_target(path_)) target_ = t->string();
  } catch (const fs::filesystem_error& e) {
    throw cannot(e.code().message());
  }
  if (exists && !S_ISREG(st.st_mode)) target_.clear();  // a FIFO or device elsewhere: in place
  if (!target_.empty() && ::access(fs::path(target_).parent_path().c_str(), W_OK) != 0)
    throw cannot(std::strerror(errno));
}

OutputFile::~OutputFile() {
  if (committed_ || !f_) return;
  if (!is_stream()) std::fclose(f_);
  if (!tmp_.empty()) std::remove(tmp_.c_str());
}

std::string OutputFile::display_name() const {
  return stream_ == stdout ? "standard output" : stream_ == stderr ? "standard error" : path_;
}

void OutputFile::open() {
  if (stream_) {
    f_ = stream_;
    return;
  }
  if (target_.empty()) {
    f_ = std::fopen(path_.c_str(), "wb");
    if (!f_) fail(errno);
    return;
  }
  const fs::path t(target_);
  // ".NAME.XXXXXX", or ".reveal.XXXXXX" where that would pass the 255-byte name limit.
  const std::string base = t.filename().string();
  std::string name = (t.parent_path() / ("." + (base.size() <= 200 ? base : std::string("reveal")) + ".XXXXXX")).string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0) fail(errno);
  tmp_ = name;
  tmp_guard_ = std::make_unique<RemoveOnSignal>(tmp_);
  // The replaced file's permissions, or what a new file gets (0666 less the umask).
  struct stat old {};
  mode_t mode;
  if (::stat(target_.c_str(), &old) == 0 && S_ISREG(old.st_mode)) {
    mode = old.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(fd, mode) != 0 || !(f_ = ::fdopen(fd, "wb"))) {
    const int e = errno;
    ::close(fd);
    fail(e);
  }
}

void OutputFile::fail(int err) {
  const std::string msg = "cannot write " + display_name() + ": " + std::strerror(err ? err : EIO);
  if (f_ && !is_stream()) std::fclose(f_);
  if (!tmp_.empty()) std::remove(tmp_.c_str());
  f_ = nullptr;
  failed_ = true;
  throw std::runtime_error(msg);
}

void OutputFile::write(std::string_view text) {
  if (committed_ || failed_) throw std::logic_error("OutputFile::write after commit or failure");
  if (!f_) open();
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), f_) != text.size()) fail(errno);
}

void OutputFile::commit() {
  if (committed_ || failed_) throw std::logic_error("OutputFile::commit twice or after a failure");
  if (!f_) open();  // nothing written: still an (empty) file
  errno = 0;
  if (std::fflush(f_) != 0 || std::ferror(f_)) fail(errno);
  if (!is_stream()) {
    std::FILE* f = f_;
    f_ = nullptr;
    errno = 0;
    if (std::fclose(f) != 0) fail(errno);
    if (!tmp_.empty() && std::rename(tmp_.c_str(), target_.c_str()) != 0) fail(errno);
    tmp_guard_.reset();
  }
  committed_ = true;
}

void write_file(const std::string& path, const std::string& text, const std::vector<std::string>& inputs,
                const std::string& flag, bool model_ok) {
  OutputFile out(path, inputs, flag, model_ok);
  out.write(text);
  out.commit();
}

}  // namespace reveal::cli
