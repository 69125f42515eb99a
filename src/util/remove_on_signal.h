// Temporary files that must not outlive the process when it is interrupted: while a
// RemoveOnSignal lives, SIGINT, SIGTERM or SIGHUP first unlinks its path, then takes the signal's
// default action (the process ends as it would have, exit status 128 + signal). Used by the
// atomic writers (the CLI's OutputFile, import's write_store) for their temporaries.
// The handler is installed only where the signal still has its default action, so a command
// with its own handlers (record, agent) keeps them. At most 8 paths at once (more are not
// guarded); paths longer than 4095 bytes are not guarded. Async-signal-safe: unlink(2) only.
#pragma once

#include <string>

namespace reveal {

class RemoveOnSignal {
 public:
  explicit RemoveOnSignal(const std::string& path);
  ~RemoveOnSignal();
  RemoveOnSignal(const RemoveOnSignal&) = delete;
  RemoveOnSignal& operator=(const RemoveOnSignal&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace reveal
