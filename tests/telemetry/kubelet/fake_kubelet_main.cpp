// reveal_fake_kubelet SOCKET PODS_FILE: the stand-in kubelet (fake_kubelet.h) as a process, for
// the agent's end-to-end test (tests/cli/agent_gpu_pods_test.sh). Serves v1.PodResourcesLister
// on the unix socket SOCKET until SIGTERM or SIGINT; every call re-reads PODS_FILE (one
// container per line: "namespace pod container resource device_id[,device_id...]").
#include <signal.h>

#include <cstdio>

#include "fake_kubelet.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: reveal_fake_kubelet SOCKET PODS_FILE\n");
    return 2;
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before gRPC's threads start: they inherit the mask
  reveal::test::FakeKubelet k(argv[1]);
  k.set_pods_file(argv[2]);
  std::fprintf(stderr, "fake kubelet serving %s\n", argv[1]);
  int sig = 0;
  sigwait(&set, &sig);
  return 0;
}
