// A temporary file of named pieces of text, written once and read back in any order: what a
// command renders as it goes but must output in another order (the hosts' reports of
// `reveal detect --peers --json`, written as each host is scored, output in rank order), so
// that the pieces are never all in memory (issue #19).
//
// The file is made under $TMPDIR (else /tmp) with mkstemp and unlinked at once: gone when the
// Spool is. Errors (no temporary file, a failed write or read, a name added twice, an unknown
// name) throw std::runtime_error with one line. Memory: the names and two offsets each.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace reveal::cli {

class Spool {
 public:
  using Writer = std::function<void(std::string_view)>;
  Spool();
  ~Spool();
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  // Appends what `produce` hands its writer, as the piece `name`.
  void add(const std::string& name, const std::function<void(const Writer&)>& produce);
  // Hands piece `name` to `write`, in parts of at most 1 MiB.
  void replay(const std::string& name, const Writer& write);

 private:
  std::FILE* f_ = nullptr;
  std::int64_t end_ = 0;                                        // bytes written
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> pieces_;  // name -> offset, length
};

}  // namespace reveal::cli
