#include "util/open_files_limit.h"

#include <algorithm>

namespace reveal {
namespace {
rlim_t g_found = RLIM_INFINITY;  // the soft limit raise_open_files_limit() replaced, if any
}  // namespace

void raise_open_files_limit() {
  struct rlimit r {};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return;
  const rlim_t want = r.rlim_max == RLIM_INFINITY ? kOpenFilesCap : std::min(r.rlim_max, kOpenFilesCap);
  if (r.rlim_cur >= want) return;
  const rlim_t found = r.rlim_cur;
  r.rlim_cur = want;
  if (::setrlimit(RLIMIT_NOFILE, &r) == 0) g_found = found;
}

void restore_open_files_limit() {
  if (g_found == RLIM_INFINITY) return;
  struct rlimit r {};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return;
  r.rlim_cur = g_found;
  ::setrlimit(RLIMIT_NOFILE, &r);
}

}  // namespace reveal
