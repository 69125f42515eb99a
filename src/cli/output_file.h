// Where a subcommand's output file goes, written so that a failure never costs what was there:
// `reveal report -o`, `detect --html`, `export -o`, `docs metrics -o`.
//   "-", or the file that is already standard output or standard error (/dev/stdout,
//   /dev/stderr, /proc/self/fd/1, the file stdout is redirected to): written to that stream,
//   so an appending redirection appends; the caller prints its "wrote" line elsewhere.
//   A device or a FIFO (/dev/null, /dev/full), and anything under /dev or /proc: written in place,
//   opened at the first write(); never renamed over (that would replace /dev/null for everyone).
//   Anything else: written to a new temporary file beside it (.NAME.XXXXXX, or .reveal.XXXXXX for
//   a long NAME; created at the first write(), with the replaced file's permissions) and renamed
//   over it on commit(). On an error,
//   or when the OutputFile is destroyed uncommitted, the file is left as it was. A symbolic link
//   stays a link: the file it leads to is replaced (created, for a dangling link).
// Refused when constructed, before any work: an empty path, a flag (file_args.h
// check_not_flag), or one of the command's inputs or their side files (check_not_input):
// UsageError, exit 2. A
// directory, an existing Reveal store (SQLite) or model file, which no report or CSV should
// replace, or a missing or unwritable parent directory: std::runtime_error, exit 3, as `record`
// and `train` refuse a file of the wrong kind. Write errors (a full disk, /dev/full, a closed
// pipe) throw std::runtime_error naming the file (exit 3).
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace reveal {
class RemoveOnSignal;
}

namespace reveal::cli {

class OutputFile {
 public:
  // `model_ok`: an existing model file may be replaced (`reveal train -o`).
  OutputFile(std::string path, const std::vector<std::string>& inputs, const std::string& flag,
             bool model_ok = false);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();  // uncommitted: closes and removes the temporary file (so does a SIGINT, SIGTERM
                  // or SIGHUP meanwhile: util/remove_on_signal.h)

  void write(std::string_view text);  // throws std::runtime_error on a failed write
  void commit();                      // flush, close, rename into place; throws on failure
  bool is_stdout() const { return stream_ == stdout; }
  bool is_stream() const { return stream_ != nullptr; }  // standard output or standard error
  const std::string& path() const { return path_; }
  // "standard output", "standard error" or the path, for messages.
  std::string display_name() const;

 private:
  void open();  // at the first write() or commit()
  [[noreturn]] void fail(int err);
  std::string path_;
  std::string target_;        // the file replaced; empty: written in place (device, FIFO, /proc)
  std::string tmp_;           // its temporary file, once created
  std::unique_ptr<RemoveOnSignal> tmp_guard_;  // removes tmp_ on SIGINT/SIGTERM/SIGHUP
  std::FILE* stream_ = nullptr;  // stdout or stderr when written to a stream
  std::FILE* f_ = nullptr;
  bool committed_ = false, failed_ = false;
};

// The whole of `text` through an OutputFile.
void write_file(const std::string& path, const std::string& text, const std::vector<std::string>& inputs,
                const std::string& flag, bool model_ok = false);

}  // namespace reveal::cli
