// Lines of a text file read a block at a time, for importers that stream (issue #19: `reveal
// import csv` of a week in memory that does not grow with it). The lines are those
// importer::split_lines() gives of the whole file: a leading UTF-8 BOM dropped, "\n" or "\r\n"
// ends a line, a final line without one included, numbered from 1.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "store/ingest/import_common.h"

namespace reveal::importer {

class LineReader {
 public:
  // A line may hold at most this many bytes (a row of 800 channels is some 20 KB).
  static constexpr std::size_t kMaxLineBytes = std::size_t{64} << 20;

  // Opens `path` (named so in messages). Throws ImportError "<path>: cannot open: <reason>" (or
  // "is a directory").
  explicit LineReader(const std::string& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line into `line` (its text valid until the next call); false at the end. Throws
  // ImportError "<path>:<line>:1: a line longer than 64 MiB" or "<path>: read failed: <reason>".
  bool next(Line& line);
  // Bytes of the file consumed so far, and its size when opened (for progress).
  std::uint64_t bytes_read() const { return consumed_; }
  std::uint64_t size() const { return size_; }

 private:
  bool fill();  // reads one more block; false at the end of the file

  std::string path_;
  std::FILE* f_ = nullptr;
  std::string buf_;
  std::size_t pos_ = 0;  // start of the next line in buf_
  std::size_t number_ = 0;
  std::uint64_t consumed_ = 0, size_ = 0;
  bool eof_ = false, started_ = false;
};

}  // namespace reveal::importer
