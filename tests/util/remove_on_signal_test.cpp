#include "util/remove_on_signal.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace reveal {
namespace {

namespace fs = std::filesystem;

// Runs `child` in a forked process; returns its wait status.
template <class F>
int in_child(F child) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    child();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

fs::path touch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  std::FILE* f = std::fopen(p.c_str(), "w");
  std::fclose(f);
  return p;
}

TEST(RemoveOnSignal, ATerminatedProcessLeavesNoGuardedFileAndDiesOfTheSignal) {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    const fs::path guarded = touch("guarded"), other = touch("unguarded");
    const int status = in_child([&] {
      ::signal(sig, SIG_DFL);
      RemoveOnSignal guard(guarded.string());
      ::raise(sig);
    });
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << sig << " status " << status;
    EXPECT_FALSE(fs::exists(guarded)) << sig;
    EXPECT_TRUE(fs::exists(other)) << sig;
    fs::remove(other);
  }
}

TEST(RemoveOnSignal, AReleasedGuardRemovesNothing) {
  const fs::path kept = touch("kept");
  const int status = in_child([&] {
    ::signal(SIGTERM, SIG_DFL);
    { RemoveOnSignal guard(kept.string()); }
    ::raise(SIGTERM);
  });
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  EXPECT_TRUE(fs::exists(kept));
  fs::remove(kept);
}

TEST(RemoveOnSignal, AnotherHandlerIsKept) {
  const fs::path kept = touch("theirs");
  const int status = in_child([&] {
    ::signal(SIGTERM, [](int) { ::_exit(7); });
    RemoveOnSignal guard(kept.string());
    ::raise(SIGTERM);
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7);
  EXPECT_TRUE(fs::exists(kept));
  fs::remove(kept);
}

}  // namespace
}  // namespace reveal
