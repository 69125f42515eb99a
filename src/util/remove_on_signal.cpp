// RemoveOnSignal: see remove_on_signal.h.
#include "remove_on_signal.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

namespace reveal {
namespace {

constexpr int kSlots = 8;
constexpr std::size_t kPathMax = 4096;
char g_paths[kSlots][kPathMax];
volatile std::sig_atomic_t g_used[kSlots];

extern "C" void remove_and_die(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_used[i]) ::unlink(g_paths[i]);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_once() {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;  // keep theirs
    struct sigaction sa {};
    sa.sa_handler = remove_and_die;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace

RemoveOnSignal::RemoveOnSignal(const std::string& path) {
  if (path.empty() || path.size() >= kPathMax) return;
  install_once();
  for (int i = 0; i < kSlots; ++i)
    if (!g_used[i]) {
      std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
      g_used[i] = 1;  // after the path is complete
      slot_ = i;
      return;
    }
}

RemoveOnSignal::~RemoveOnSignal() {
  if (slot_ >= 0) g_used[slot_] = 0;
}

}  // namespace reveal
