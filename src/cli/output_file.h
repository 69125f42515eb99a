// Where a subcommand's output file goes, written so that a failure never costs what was there:
// `reveal report -o`, `detect --html`, `export -o`.
//   "-", "/dev/stdout"    standard output (the caller prints its "wrote" line to stderr);
//   "/dev/stderr"         standard error: the streams themselves, so appending redirections append
//   a device or a pipe    written in place (/dev/null, /dev/full, a FIFO): never renamed over
//   anything else         written to PATH.tmp, renamed over PATH on commit(); on an error, or
//                         when the OutputFile is destroyed uncommitted, PATH is left as it was.
//                         A symbolic link stays a link: the file it leads to is replaced (a link
//                         into /proc or /dev, or a dangling one, is written through in place)
// Refused before anything is opened: an empty path, or one of the command's inputs
// (std::filesystem::equivalent, so ./run.db and run.db are the same): UsageError, exit 2. A
// directory, or an existing Reveal store (SQLite) or model file, which no report or CSV should
// replace: std::runtime_error, exit 3, as `record` and `train` refuse a file of the wrong kind.
// Write errors (a full disk, /dev/full, a closed pipe) throw std::runtime_error naming the file
// (exit 3).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace reveal::cli {

// Throws UsageError when `out` names the same file as one of `inputs` (existing files only).
// `flag` names the option in the message ("-o", "--html").
void check_not_input(const std::string& out, const std::vector<std::string>& inputs, const std::string& flag);

class OutputFile {
 public:
  OutputFile(std::string path, const std::vector<std::string>& inputs, const std::string& flag);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();  // uncommitted: closes and removes PATH.tmp

  void write(std::string_view text);  // throws std::runtime_error on a failed write
  void commit();                      // flush, close, rename into place; throws on failure
  bool is_stdout() const { return to_stdout_; }
  const std::string& path() const { return path_; }
  // "standard output" or the path, for messages.
  std::string display_name() const { return to_stdout_ ? "standard output" : path_; }

 private:
  [[noreturn]] void fail(int err);
  bool standard_stream() const { return f_ == stdout || f_ == stderr; }
  std::string path_;
  std::string target_, tmp_;  // the file replaced and its temporary; empty: written in place
  std::FILE* f_ = nullptr;
  bool to_stdout_ = false, committed_ = false;
};

// The whole of `text` through an OutputFile.
void write_file(const std::string& path, const std::string& text, const std::vector<std::string>& inputs,
                const std::string& flag);

}  // namespace reveal::cli
