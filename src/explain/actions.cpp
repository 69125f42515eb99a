// The action table: what an operator should check first, per subsystem.
// Each line names the strongest channel so the operator knows where to look.
#include <cmath>
#include <cstdio>

#include "reveal/incident.h"
#include "reveal/units.h"

namespace reveal {

std::string suggest_action(Subsystem s, const ChannelEvidence& top) {
  std::string what;
  switch (s) {
    case Subsystem::cpu:
      what = "CPU contention or throttling: look for foreign processes on the job's cores "
             "(top -H, pidstat), cgroup CPU quota throttling, CPU affinity and thread counts";
      break;
    case Subsystem::memory:
      what = "memory pressure: check for a leak or a co-located memory hog (memory.current, "
             "MemAvailable, major faults, swap), NUMA placement and memory bandwidth";
      break;
    case Subsystem::network:
      what = "network degradation: check link errors and retransmits, MTU on every hop, NIC "
             "offloads, rate limits and drops in the interfaces' queueing disciplines (tc -s qdisc) "
             "and foreign traffic on the job's interfaces (ip -s link, ss -ti)";
      break;
    case Subsystem::storage:
      what = "storage contention: check other I/O on the device (iotop, iostat -x), checkpoint "
             "or data-loader bursts, and filesystem metadata storms";
      break;
    case Subsystem::gpu:
      what = "GPU anomaly: check other processes on the GPU (nvidia-smi), throttle reasons, ECC and XID events";
      break;
    case Subsystem::interconnect:
      what = "interconnect anomaly: check PCIe/NVLink/InfiniBand link state, width and error counters";
      break;
    case Subsystem::power_thermal:
      what = "power/thermal: check temperatures, power capping and frequency throttling";
      break;
    case Subsystem::system:
      what = "host-wide change: check what else started on the host at this time";
      break;
  }
  char z[32];
  std::snprintf(z, sizeof z, "%+.1f", top.z);
  return top.name + " " + format_value(top.value, top.unit) + " vs " + format_value(top.reference, top.unit) +
         " (robust z " + z + "): " + what;
}

std::string steal_action(const ChannelEvidence& symptom) {
  return symptom.name + " +" + format_value(symptom.value, symptom.unit) + " over " +
         format_value(symptom.reference, symptom.unit) +
         ": the hypervisor ran other guests while this VM's vCPUs were ready to run (steal), so every "
         "job here slows down with nothing on the host to blame: the physical host is oversubscribed or a "
         "neighbour VM is busy. Check the provider's host health and the steal history, move the instance "
         "to another host (stop/start) or use dedicated hosts";
}

std::string cache_drop_action(const ChannelEvidence& symptom) {
  return symptom.name + " " + format_value(symptom.value, symptom.unit) + " vs " +
         format_value(symptom.reference, symptom.unit) +
         ": something writes /proc/sys/vm/drop_caches, so the page cache (the jobs' data sets, libraries and "
         "checkpoints) is thrown away and read from disk again. Find the writer (a cron job, a tuning or "
         "benchmark script, a container's entrypoint; auditctl -w /proc/sys/vm/drop_caches -p w names it) and "
         "stop it; to free memory for a job, set memory limits instead";
}

}  // namespace reveal
