// raise_open_files_limit / restore_open_files_limit (src/util/open_files_limit.h).
#include "util/open_files_limit.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

namespace reveal {
namespace {

rlimit current() {
  rlimit r{};
  EXPECT_EQ(::getrlimit(RLIMIT_NOFILE, &r), 0);
  return r;
}

// Runs in a child process: the limits are process-wide and the other tests share them.
TEST(OpenFilesLimit, RaisesSoftToHardAndRestoresTheFoundLimit) {
  const rlimit start = current();
  if (start.rlim_max != RLIM_INFINITY && start.rlim_max < 300) GTEST_SKIP() << "hard limit below 300";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int bad = 0;
    rlimit low = start;
    low.rlim_cur = 256;  // a session's soft limit, below the hard one
    if (::setrlimit(RLIMIT_NOFILE, &low) != 0) ::_exit(10);
    raise_open_files_limit();
    rlimit r{};
    ::getrlimit(RLIMIT_NOFILE, &r);
    const rlim_t want = start.rlim_max == RLIM_INFINITY ? kOpenFilesCap : std::min(start.rlim_max, kOpenFilesCap);
    if (r.rlim_cur != want) bad |= 1;             // raised to the hard limit (capped)
    if (r.rlim_max != start.rlim_max) bad |= 2;   // the hard limit untouched
    restore_open_files_limit();
    ::getrlimit(RLIMIT_NOFILE, &r);
    if (r.rlim_cur != 256) bad |= 4;              // what a child of `record -- CMD` gets
    ::_exit(bad);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "bits: 1 not raised, 2 hard limit changed, 4 not restored, 10 setup";
  EXPECT_EQ(current().rlim_cur, start.rlim_cur);  // this process untouched
}

}  // namespace
}  // namespace reveal
