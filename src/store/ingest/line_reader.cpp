#include "store/ingest/line_reader.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace reveal::importer {

namespace {
constexpr std::size_t kBlock = std::size_t{1} << 20;
}

LineReader::LineReader(const std::string& path) : path_(path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw ImportError(path + ": is a directory");
  f_ = std::fopen(path.c_str(), "rb");
  if (!f_) throw ImportError(path + ": cannot open: " + std::strerror(errno));
  if (::fstat(fileno(f_), &st) == 0 && S_ISREG(st.st_mode)) size_ = std::uint64_t(st.st_size);
}

LineReader::~LineReader() {
  if (f_) std::fclose(f_);
}

bool LineReader::fill() {
  if (eof_) return false;
  buf_.erase(0, pos_);
  pos_ = 0;
  const std::size_t had = buf_.size();
  buf_.resize(had + kBlock);
  const std::size_t got = std::fread(buf_.data() + had, 1, kBlock, f_);
  buf_.resize(had + got);
  if (got < kBlock) {
    if (std::ferror(f_)) throw ImportError(path_ + ": read failed: " + std::strerror(errno));
    eof_ = true;
  }
  if (!started_ && buf_.size() >= 3) {
    started_ = true;
    if (buf_.compare(0, 3, "\xEF\xBB\xBF") == 0) {
      pos_ = 3;
      consumed_ += 3;
    }
  } else if (!started_ && eof_) {
    started_ = true;  // a file shorter than a BOM
  }
  return got > 0;
}

bool LineReader::next(Line& line) {
  std::size_t from = pos_;  // where the search for '\n' resumes
  for (;;) {
    const std::size_t nl = buf_.find('\n', from);
    if (nl != std::string::npos) {
      if (nl - pos_ > kMaxLineBytes)
        fail_at(path_, number_ + 1, 1, "a line longer than " + std::to_string(kMaxLineBytes >> 20) + " MiB");
      std::string_view text(buf_.data() + pos_, nl - pos_);
      consumed_ += nl + 1 - pos_;
      pos_ = nl + 1;
      if (text.ends_with('\r')) text.remove_suffix(1);
      line = {text, ++number_};
      return true;
    }
    if (buf_.size() - pos_ > kMaxLineBytes)
      fail_at(path_, number_ + 1, 1, "a line longer than " + std::to_string(kMaxLineBytes >> 20) + " MiB");
    const std::size_t scanned = buf_.size() - pos_;
    if (!fill()) {
      if (pos_ >= buf_.size()) return false;
      std::string_view text(buf_.data() + pos_, buf_.size() - pos_);  // a last line without "\n"
      consumed_ += text.size();
      pos_ = buf_.size();
      if (text.ends_with('\r')) text.remove_suffix(1);
      line = {text, ++number_};
      return true;
    }
    from = pos_ + scanned;
  }
}

}  // namespace reveal::importer
