// channel_role(): symptom channels (shortage, failure) vs load channels (work done, levels).
#include <gtest/gtest.h>

#include "reveal/channel.h"

namespace reveal {
namespace {

TEST(ChannelRole, ShortageAndFailureChannelsAreSymptoms) {
  for (const char* name : {"proc.pressure:cpu_some_total", "proc.pressure:io_full_total", "derived:psi_memory_some_pct",
                           "proc.stat:steal", "proc.stat:steal.cpu1", "proc.stat:iowait.cpu0", "derived:cpu_steal_pct",
                           "derived:cpu_iowait_pct.cpu3", "proc.stat:procs_blocked", "proc.stat:processes", "proc.vmstat:pgmajfault",
                           "proc.vmstat:allocstall_normal", "proc.vmstat:pgscan_direct", "proc.vmstat:pswpout",
                           "proc.vmstat:oom_kill", "derived:tcp_loss_retrans_per_s",
                           "proc.net.snmp:TcpExt_TCPTimeouts", "proc.net.dev:rx_drop.eth0", "proc.net.dev:tx_errs.ib0",
                           "derived:tcp_retrans_pct", "derived:disk_await_ms.nvme0n1", "ethtool:rx_drops.eth0", "sys.net:rx_crc_errors.eth0",
                           "cgroup:cpu.stat.nr_throttled.kubepods", "nvml:clocks_event_reasons_hw_thermal_slowdown.gpu0",
                           "rdma:port_rcv_errors.mlx5_0.1", "rdma:link_downed.mlx5_0.1", "nvml:xid_events_total.gpu0",
                           "nvml:row_remap_pending.gpu0", "nvml:clocks_throttle_reasons_sw_power_cap.gpu0", "PROC.PRESSURE:CPU_SOME_TOTAL",
                           "reveal.sampler:delay_seconds", "reveal.sampler:ticks_missed", "derived:drop_caches_per_min"})
    EXPECT_EQ(channel_role(name), ChannelRole::symptom) << name;
}

// Retransmissions: those for loss (not reported spurious by D-SACK) are the symptom, scored while
// flat; the raw counts, which a busy CPU raises with spurious ones, are load; timeouts, lost
// retransmissions and retransmit failures stay symptoms.
TEST(ChannelRole, RetransmissionsForLossAreTheSymptom) {
  EXPECT_EQ(channel_role("proc.net.snmp:Tcp_RetransSegs"), ChannelRole::load);
  EXPECT_EQ(channel_role("proc.net.snmp:TcpExt_TCPFastRetrans"), ChannelRole::load);
  EXPECT_EQ(channel_role("proc.net.snmp:TcpExt_TCPDSACKRecvSegs"), ChannelRole::load);
  EXPECT_EQ(channel_role("proc.net.snmp:TcpExt_TCPLossProbes"), ChannelRole::load);
  EXPECT_EQ(channel_role("proc.net.snmp:TcpExt_DelayedACKLost"), ChannelRole::load);
  for (const char* name : {"proc.net.snmp:TcpExt_TCPLostRetransmit", "proc.net.snmp:TcpExt_TCPLossProbeRecovery", "proc.net.snmp:TcpExt_TCPSlowStartRetrans",
                           "proc.net.snmp:TcpExt_TCPRetransFail", "proc.net.snmp:TcpExt_TCPTimeouts",
                           "derived:tcp_retrans_pct", "derived:tcp_loss_retrans_per_s"})
    EXPECT_EQ(channel_role(name), ChannelRole::symptom) << name;
  EXPECT_TRUE(flat_when_healthy("derived:tcp_loss_retrans_per_s", "segments/s"));
  EXPECT_FALSE(flat_when_healthy("proc.net.snmp:Tcp_RetransSegs", "count/s"));
}

// Drops of the caches: the derived count over the last 20 s is the symptom, scored while flat;
// the raw vmstat counters it is made from stay load (their per-second rate alternates 0 and 1).
TEST(ChannelRole, DropCachesDropsAreFlatWhenHealthy) {
  EXPECT_TRUE(page_cache_dropped("derived:drop_caches_per_min"));
  EXPECT_FALSE(page_cache_dropped("proc.vmstat:drop_pagecache"));
  EXPECT_FALSE(page_cache_dropped("derived:drop_caches_per_min_x"));
  EXPECT_EQ(channel_role("proc.vmstat:drop_pagecache"), ChannelRole::load);
  EXPECT_EQ(channel_role("proc.vmstat:drop_slab"), ChannelRole::load);
  EXPECT_TRUE(flat_when_healthy("derived:drop_caches_per_min", "count/min"));
  EXPECT_FALSE(flat_when_healthy("proc.vmstat:pgmajfault", "count/s"));
}

TEST(ChannelRole, WorkAndLevelsAreLoad) {
  for (const char* name : {"proc.stat:user", "proc.stat:idle.cpu1", "derived:cpu_busy_pct", "derived:cpu_user_pct.cpu0",
                           "proc.schedstat:run_time", "proc.schedstat:timeslices", "proc.schedstat:run_delay.cpu7",
                           "proc.loadavg:running", "proc.stat:procs_running_x",
                           "proc.vmstat:pgalloc_normal", "proc.vmstat:pgfree", "proc.vmstat:pgfault",
                           "proc.vmstat:nr_isolated_anon", "perf:context-switches", "perf:page-faults",
                           "proc.stat:processes_blocked_x", "proc.stat:ctxt", "proc.net.dev:rx_bytes.lo",
                           "derived:net_tx_bytes_per_s", "proc.diskstats:sectors_written.vda",
                           "proc.diskstats:discards_completed.vda", "proc.diskstats:weighted_io_time_ms.nvme0n1",
                           "proc.diskstats:write_time_ms.vda", "proc.meminfo:MemAvailable",
                           "proc.pressure:io_full_avg10", "proc.pressure:cpu_some_avg60", "cgroup.pressure:memory_some_avg300.kubepods",
                           "proc.vmstat:workingset_refault_file", "proc.vmstat:workingset_refault_anon",
                           "sys.cpuidle:time.cpu0.C1", "sys.cpuidle:usage.cpu0.C1", "nvml:utilization_gpu.gpu0",
                           // throttle reasons that are no shortage (a job ending idles its GPU)
                           "nvml:clocks_throttle_reasons_gpu_idle.gpu0", "nvml:clocks_event_reasons_gpu_idle.gpu3",
                           "nvml:clocks_throttle_reasons_applications_clocks_setting.gpu0",
                           "nvml:clocks_throttle_reasons_sync_boost.gpu1",
                           "nvml:clocks_throttle_reasons_display_clock_setting.gpu0", "no_colon_at_all", ""})
    EXPECT_EQ(channel_role(name), ChannelRole::load) << name;
}

// Work queued beyond the CPUs: a symptom for the workload-change gate, load for attribution.
TEST(ChannelRole, TasksWaitingForACpuAreSaturation) {
  for (const char* name : {"proc.stat:procs_running", "derived:runqueue_wait_per_cpu", "PROC.STAT:PROCS_RUNNING"})
    EXPECT_EQ(channel_role(name), ChannelRole::saturation) << name;
}

// Steal, host-wide or of one CPU; not the raw tick counters, other fields or look-alike names.
TEST(ChannelRole, HypervisorSteal) {
  for (const char* name : {"derived:cpu_steal_pct", "derived:cpu_steal_pct.cpu0", "derived:cpu_steal_pct.cpu223"})
    EXPECT_TRUE(hypervisor_steal(name)) << name;
  for (const char* name : {"derived:cpu_steal_pctx", "derived:cpu_steal_pct_avg", "proc.vmstat:pgsteal_direct",
                           "derived:cpu_iowait_pct", "derived:cpu_steal", "", "x:derived:cpu_steal_pct"})
    EXPECT_FALSE(hypervisor_steal(name)) << name;
}

TEST(ChannelRole, Names) {
  EXPECT_EQ(to_string(ChannelRole::symptom), "symptom");
  EXPECT_EQ(to_string(ChannelRole::load), "load");
  EXPECT_EQ(to_string(ChannelRole::saturation), "saturation");
}

}  // namespace
}  // namespace reveal
