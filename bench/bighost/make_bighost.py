#!/usr/bin/python3
"""Builds the /proc and /sys tree of a big ML host, for measuring the sampler's cost there
(issue #21 item 1: what one tick costs at 224 CPUs, 16 NICs, 8 HCAs and 200 cgroups).

  make_bighost.py OUT_DIR [--cpus 224] [--cpuidle-states 4] [--nics 16] [--hcas 8]
                          [--cgroups 200] [--disks 8]

Then e.g. `reveal probes --root OUT_DIR` or `reveal record --root OUT_DIR -o run.db`.

The host: a DGX-class 2-socket Sapphire Rapids box (Xeon Platinum 8480+: 2 x 56 cores x 2
threads = 224 CPUs, 2 TiB RAM), intel_idle with POLL/C1/C1E/C6, 8 ConnectX-7 RoCE ports
(mlx5_0..mlx5_7, 400 Gb/s, one per GPU) whose netdevs are the first 8 NICs, the other NICs
dual-port 200 GbE frontend/storage ports (the last one down), 8 NVMe drives (nvme0n1 the
boot disk with 2 partitions, the rest striped into md0) plus idle loop devices, and a
cgroup v2 tree of systemd services and Kubernetes pods. The GPUs are not here: they come
from the NVML test double (REVEAL_NVML_LIBRARY), not from files.

Every file is written in a format the probes already parse, copied from the hand-built
fixtures in tests/fixtures (host-2socket, vm-2cpu, host-cgroup2, host-2hca, config-2socket,
host-cpufreq-4cpu, host-ethtool-nics) and scaled up; the probe sources under src/telemetry say
which files are read. Values are plausible and differ per CPU, NIC, HCA, disk and cgroup
(derived from a hash of the instance's name: no RNG, the same arguments always give the same
tree), so no channel is a constant copy of another.

What each probe sees (default arguments):
  proc.stat       cpu + cpu0..cpu223 lines (8 states each) + ctxt, processes, procs_*
  proc.schedstat  version 15, 224 CPU lines with 3 domain lines each (SMT, MC, NUMA)
  sys.cpufreq     scaling_{cur,min,max}_freq of 224 CPUs
  sys.cpuidle     224 CPUs x 4 states x {time, usage}
  sys.net / proc.net.dev   lo + 16 NICs (sys.net reads sysfs here: the tree is not the
                  live /sys/class/net, so the rtnetlink path is not taken)
  rdma            mlx5_0..7 port 1: state, phys_state, rate, 21 counters, 29 hw_counters
  cgroup          exactly --cgroups cgroups, all watched by the default rule of
                  src/telemetry/cgroup/hierarchy.h: the root's children (init.scope,
                  kubepods.slice, system.slice, user.slice), plus the children of
                  system.slice and of kubepods.slice (the probe goes no deeper by default).
                  So the pods are Guaranteed-QoS pods (kubepods.slice/kubepods-pod<uid>.slice,
                  the systemd-driver layout) next to kubepods-burstable.slice and
                  kubepods-besteffort.slice, and pods have no container scopes below them:
                  a cgroup deeper than that would be in the tree but not sampled.
  cgroup.throttling  the pods and every 8th service carry a cpu.max quota.
  sys.hwmon, sys.rapl, sys.thermal   2 coretemp chips (package + one temp per core), one
                  nvme chip per disk; RAPL package and dram zones per socket; 2 x86_pkg_temp
                  zones.
  host info / config   proc/cpuinfo (224 processors), hostname, osrelease, cmdline, THP,
                  huge pages, module versions, NVIDIA driver banner, PCIe link of each NIC.
Not from this tree: ethtool (ioctls to the live kernel; the NICs' ifindex files hold numbers
no live interface has, so they are refused), tc.qdisc (live rtnetlink only), nvml (library),
perf.* (perf_event_open on the live kernel; note that they take the CPU list from this tree's
sys/devices/system/cpu/online and the CPU model from its proc/cpuinfo).

OUT_DIR must be empty or missing, or a tree this script made before (it leaves a
.make_bighost marker): then its proc/ and sys/ are replaced.
"""
import argparse
import hashlib
import os
import shutil
import sys

MARKER = ".make_bighost"

HZ = 100                       # USER_HZ: /proc/stat ticks per second
UPTIME_S = 1_036_800           # 12 days
BTIME = 1764500000             # boot time (epoch s), as in the host-2socket fixture
PAGE = 4096
MEM_TOTAL_KB = 2_113_470_148   # ~2 TiB
CPU_MODEL = "Intel(R) Xeon(R) Platinum 8480+"
KERNEL = "6.8.0-45-generic"


# ----------------------------------------------------------------------------------------------
# Helpers


def pick(lo, hi, *key):
    """A deterministic integer in [lo, hi] for `key` (a hash, no RNG: same key, same value)."""
    digest = hashlib.blake2b(repr(key).encode(), digest_size=8).digest()
    return lo + int.from_bytes(digest, "big") % (hi - lo + 1)


def frac(lo_pct, hi_pct, *key):
    """A deterministic fraction in [lo_pct, hi_pct] percent, 0.01 % steps."""
    return pick(lo_pct * 100, hi_pct * 100, *key) / 10000.0


class Tree:
    """Writes files under one root, creating directories as needed; counts what it wrote."""

    def __init__(self, root):
        self.root = root
        self.files = 0

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if text and not text.endswith("\n"):
            text += "\n"
        with open(path, "w") as f:
            f.write(text)
        self.files += 1

    def write_values(self, rel_dir, values):
        """One file per (name, value): the one-value sysfs attribute layout."""
        for name, value in values:
            self.write(f"{rel_dir}/{name}", str(value))


def cpu_list(n):
    return "0" if n == 1 else f"0-{n - 1}"


def cpumask(cpus, n):
    """A cpumask as the kernel prints it (%*pb): 32-bit hex words, most significant first."""
    bits = 0
    for c in cpus:
        bits |= 1 << c
    words = [(bits >> (32 * w)) & 0xFFFFFFFF for w in range((n + 31) // 32)]
    return ",".join(f"{w:08x}" for w in reversed(words))


class Topology:
    """CPU numbering as Linux does it on a 2-socket SMT x86 host: cpu0..(P-1) are the first
    threads of the P physical cores (socket 0's cores, then socket 1's), cpuP.. their siblings."""

    def __init__(self, cpus):
        self.cpus = cpus
        self.smt = 2 if cpus % 2 == 0 and cpus >= 4 else 1
        self.cores = cpus // self.smt
        self.sockets = 2 if self.cores % 2 == 0 else 1
        self.cores_per_socket = self.cores // self.sockets

    def core(self, cpu):
        return cpu % self.cores

    def socket(self, cpu):
        return self.core(cpu) // self.cores_per_socket

    def core_id(self, cpu):
        return self.core(cpu) % self.cores_per_socket

    def siblings(self, cpu):
        return [self.core(cpu) + t * self.cores for t in range(self.smt)]

    def socket_cpus(self, s):
        return [c for c in range(self.cpus) if self.socket(c) == s]


def cpu_times(cpu):
    """/proc/stat ticks of one CPU: user nice system idle iowait irq softirq steal guest guest_nice.
    A busy training host: 30-60 % user, 4-9 % system, the rest mostly idle."""
    total = UPTIME_S * HZ - pick(0, 5000, "online-late", cpu)
    user = int(total * frac(30, 60, "user", cpu))
    nice = pick(0, 20000, "nice", cpu)
    system = int(total * frac(4, 9, "system", cpu))
    iowait = int(total * frac(0, 1, "iowait", cpu))
    irq = int(total * frac(0, 0.5, "irq", cpu))
    softirq = int(total * frac(0.3, 2, "softirq", cpu))
    idle = total - user - nice - system - iowait - irq - softirq
    return [user, nice, system, idle, iowait, irq, softirq, 0, 0, 0]


# ----------------------------------------------------------------------------------------------
# CPUs: /proc/stat, /proc/cpuinfo, /proc/schedstat, cpufreq, cpuidle


def write_proc_stat(t, topo, n_irqs):
    per_cpu = [cpu_times(c) for c in range(topo.cpus)]
    total = [sum(col) for col in zip(*per_cpu)]
    lines = ["cpu  " + " ".join(map(str, total))]
    lines += [f"cpu{c} " + " ".join(map(str, v)) for c, v in enumerate(per_cpu)]
    # One count per IRQ number; most are unused (0), as on a real host.
    irqs = [pick(10**3, 10**10, "irq", i) if pick(0, 3, "irq-used", i) == 0 else 0 for i in range(n_irqs)]
    lines.append(f"intr {sum(irqs)} " + " ".join(map(str, irqs)))
    lines.append(f"ctxt {pick(10**11, 10**12, 'ctxt')}")
    lines.append(f"btime {BTIME}")
    lines.append(f"processes {pick(10**7, 10**8, 'forks')}")
    lines.append(f"procs_running {pick(topo.cpus // 4, topo.cpus // 2, 'running')}")
    lines.append(f"procs_blocked {pick(0, 8, 'blocked')}")
    soft = [pick(10**6, 10**11, "softirq", i) for i in range(10)]  # HI TIMER NET_TX NET_RX ... RCU
    lines.append(f"softirq {sum(soft)} " + " ".join(map(str, soft)))
    t.write("proc/stat", "\n".join(lines))


CPU_FLAGS = (
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr "
    "sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon pebs bts rep_good "
    "nopl xtopology nonstop_tsc cpuid aperfmperf tsc_known_freq pni pclmulqdq dtes64 monitor ds_cpl vmx "
    "smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic movbe popcnt "
    "tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch cpuid_fault epb cat_l3 "
    "cat_l2 cdp_l3 intel_ppin cdp_l2 ssbd mba ibrs ibpb stibp ibrs_enhanced tpr_shadow flexpriority ept "
    "vpid ept_ad fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid cqm rdt_a avx512f avx512dq rdseed "
    "adx smap avx512ifma clflushopt clwb intel_pt avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec "
    "xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local split_lock_detect avx_vnni "
    "avx512_bf16 wbnoinvd dtherm ida arat pln pts hfi vnmi avx512vbmi umip pku ospke waitpkg "
    "avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg tme avx512_vpopcntdq la57 rdpid "
    "bus_lock_detect cldemote movdiri movdir64b enqcmd fsrm md_clear serialize tsxldtrk pconfig arch_lbr "
    "ibt amx_bf16 avx512_fp16 amx_tile amx_int8 flush_l1d arch_capabilities")


def write_proc_cpuinfo(t, topo):
    """Read by the host info (processor count, model name), the config snapshot (model,
    microcode) and perf's PMU choice (vendor, family, model): Sapphire Rapids, family 6 model 143."""
    blocks = []
    for c in range(topo.cpus):
        apic = topo.socket(c) * 128 + topo.core_id(c) * 2 + (c // topo.cores)
        mhz = pick(800000, 3800000, "cur_freq", c) / 1000
        blocks.append(
            f"processor\t: {c}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n"
            f"model name\t: {CPU_MODEL}\nstepping\t: 8\nmicrocode\t: 0x2b000590\n"
            f"cpu MHz\t\t: {mhz:.3f}\ncache size\t: 107520 KB\nphysical id\t: {topo.socket(c)}\n"
            f"siblings\t: {topo.cpus // topo.sockets}\ncore id\t\t: {topo.core_id(c)}\n"
            f"cpu cores\t: {topo.cores_per_socket}\napicid\t\t: {apic}\ninitial apicid\t: {apic}\n"
            f"fpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: 32\nwp\t\t: yes\nflags\t\t: {CPU_FLAGS}\n"
            f"bugs\t\t: spectre_v1 spectre_v2 spec_store_bypass swapgs eibrs_pbrsb bhi\n"
            f"bogomips\t: 4000.00\nclflush size\t: 64\ncache_alignment\t: 64\n"
            f"address sizes\t: 52 bits physical, 57 bits virtual\npower management:\n")
    t.write("proc/cpuinfo", "\n".join(blocks))


def write_proc_schedstat(t, topo):
    """Version 15: per CPU "cpu<N> 0 0 sched_count sched_goidle ttwu_count ttwu_local
    rq_cpu_time run_delay pcount", then its domain lines (cpumask + 36 load-balance counters,
    ignored by the probe but read with the file every tick)."""
    n = topo.cpus
    lines = ["version 15", f"timestamp {4296384012 + UPTIME_S * 250}"]
    for c in range(n):
        sched = pick(10**8, 10**9, "sched_count", c)
        goidle = sched // pick(2, 5, "goidle", c)
        ttwu = pick(10**8, 10**9, "ttwu", c)
        run_ns = cpu_times(c)[0] * (10**9 // HZ)
        delay_ns = run_ns // pick(20, 200, "run_delay", c)
        slices = pick(10**8, 10**9, "pcount", c)
        lines.append(f"cpu{c} 0 0 {sched} {goidle} {ttwu} {ttwu // 2} {run_ns} {delay_ns} {slices}")
        domains = [topo.siblings(c), topo.socket_cpus(topo.socket(c)), list(range(n))]
        if topo.smt == 1:
            domains = domains[1:]
        for d, cpus in enumerate(domains):
            stats = " ".join(str(pick(0, 10**6, "lb", c, d, k) if k % 3 == 0 else 0) for k in range(36))
            lines.append(f"domain{d} {cpumask(cpus, n)} {stats}")
    t.write("proc/schedstat", "\n".join(lines))


def write_cpu_sysfs(t, topo):
    """online/possible/present, SMT state, and per CPU cpufreq (files of host-cpufreq-4cpu and
    host-2socket): kHz, performance governor, 800 MHz .. 3.8 GHz."""
    base = "sys/devices/system/cpu"
    for f in ("online", "possible", "present"):
        t.write(f"{base}/{f}", cpu_list(topo.cpus))
    t.write(f"{base}/smt/control", "on" if topo.smt > 1 else "notsupported")
    t.write(f"{base}/smt/active", "1" if topo.smt > 1 else "0")
    for c in range(topo.cpus):
        t.write_values(f"{base}/cpu{c}/cpufreq", [
            ("scaling_cur_freq", pick(800000, 3800000, "cur_freq", c)),
            ("scaling_min_freq", 800000),
            ("scaling_max_freq", 3800000),
            ("scaling_governor", "performance"),
        ])


# intel_idle on Sapphire Rapids: (name, desc, exit latency in us). More states than these
# (--cpuidle-states > 4) get made-up deeper C-states in the same format.
IDLE_STATES = [("POLL", "CPUIDLE CORE POLL IDLE", 0), ("C1", "MWAIT 0x00", 1),
               ("C1E", "MWAIT 0x01", 2), ("C6", "MWAIT 0x20", 290)]


def idle_state(k):
    if k < len(IDLE_STATES):
        return IDLE_STATES[k]
    return (f"C{k + 3}", f"MWAIT 0x{0x20 + 0x10 * (k - 3):02x}", 290 + 200 * (k - 3))


def write_cpuidle(t, topo, n_states):
    """cpu<N>/cpuidle/state<K>/{name,desc,latency,time,usage} as in host-2socket, and the
    driver files the probe names when there are no states. The states' time (us) splits the
    CPU's idle time: little in POLL, most in the deepest state."""
    base = "sys/devices/system/cpu"
    t.write(f"{base}/cpuidle/current_driver", "intel_idle")
    t.write(f"{base}/cpuidle/current_governor_ro", "menu")
    for c in range(topo.cpus):
        idle_us = cpu_times(c)[3] * (10**6 // HZ)
        weights = [pick(1, 5, "w", c, 0)] + [pick(10, 100, "w", c, k) for k in range(1, n_states)]
        if n_states > 1:
            weights[-1] *= 8  # the deepest state holds most idle time
        for k in range(n_states):
            name, desc, latency = idle_state(k)
            time_us = idle_us * weights[k] // sum(weights)
            usage = time_us // max(1, pick(20, 60, "residency", c, k) * (latency + 1))
            t.write_values(f"{base}/cpu{c}/cpuidle/state{k}", [
                ("name", name), ("desc", desc), ("latency", latency),
                ("time", time_us), ("usage", max(usage, pick(100, 10000, "min_usage", c, k))),
            ])


# ----------------------------------------------------------------------------------------------
# Memory, load, pressure, uptime


MEMINFO_KEYS = """MemTotal MemFree MemAvailable Buffers Cached SwapCached Active Inactive Active(anon)
Inactive(anon) Active(file) Inactive(file) Unevictable Mlocked SwapTotal SwapFree Zswap Zswapped
Dirty Writeback AnonPages Mapped Shmem KReclaimable Slab SReclaimable SUnreclaim KernelStack
PageTables SecPageTables NFS_Unstable Bounce WritebackTmp CommitLimit Committed_AS VmallocTotal
VmallocUsed VmallocChunk Percpu AnonHugePages ShmemHugePages ShmemPmdMapped FileHugePages
FilePmdMapped Balloon HugePages_Total HugePages_Free HugePages_Rsvd HugePages_Surp Hugepagesize
Hugetlb DirectMap4k DirectMap2M DirectMap1G""".split()


def write_proc_meminfo(t, topo):
    """The keys of the vm-2cpu fixture (a 6.x kernel), values for a 2 TiB training host: a
    large page cache (datasets), ~40 % anonymous memory (pinned host buffers, dataloaders)."""
    total = MEM_TOTAL_KB
    anon = total * 38 // 100
    cached = total * 31 // 100
    buffers = 2_104_332
    shmem = 18_874_368
    sreclaim, sunreclaim = 24_117_248, 9_437_184
    free = total - anon - cached - buffers - sreclaim - sunreclaim - 30_000_000
    v = {
        "MemTotal": total, "MemFree": free, "MemAvailable": free + cached * 9 // 10 + sreclaim,
        "Buffers": buffers, "Cached": cached, "SwapCached": 0,
        "Active": anon * 9 // 10 + cached // 2, "Inactive": anon // 10 + cached // 2,
        "Active(anon)": anon * 9 // 10, "Inactive(anon)": anon // 10,
        "Active(file)": cached // 2, "Inactive(file)": cached // 2,
        "Unevictable": 1_048_576, "Mlocked": 1_048_576, "SwapTotal": 0, "SwapFree": 0,
        "Zswap": 0, "Zswapped": 0, "Dirty": 284_212, "Writeback": 1_024, "AnonPages": anon - shmem,
        "Mapped": 12_582_912, "Shmem": shmem, "KReclaimable": sreclaim + 262_144,
        "Slab": sreclaim + sunreclaim, "SReclaimable": sreclaim, "SUnreclaim": sunreclaim,
        "KernelStack": topo.cpus * 1_024 + 120_000, "PageTables": 3_145_728, "SecPageTables": 0,
        "NFS_Unstable": 0, "Bounce": 0, "WritebackTmp": 0, "CommitLimit": total // 2,
        "Committed_AS": anon * 2, "VmallocTotal": 13_743_895_347_199, "VmallocUsed": 4_194_304,
        "VmallocChunk": 0, "Percpu": topo.cpus * 2_816, "AnonHugePages": anon // 2,
        "ShmemHugePages": 0, "ShmemPmdMapped": 0, "FileHugePages": 0, "FilePmdMapped": 0,
        "Balloon": 0, "HugePages_Total": 0, "HugePages_Free": 0, "HugePages_Rsvd": 0,
        "HugePages_Surp": 0, "Hugepagesize": 2048, "Hugetlb": 0, "DirectMap4k": 3_145_728,
        "DirectMap2M": 180_355_072, "DirectMap1G": 1_966_080_000,
    }
    counts = {"HugePages_Total", "HugePages_Free", "HugePages_Rsvd", "HugePages_Surp"}
    lines = [f"{k + ':':<16}{v[k]:>8}" + ("" if k in counts else " kB") for k in MEMINFO_KEYS]
    t.write("proc/meminfo", "\n".join(lines))


VMSTAT_KEYS = """nr_free_pages nr_free_pages_blocks nr_zone_inactive_anon nr_zone_active_anon
nr_zone_inactive_file nr_zone_active_file nr_zone_unevictable nr_zone_write_pending nr_mlock
nr_zspages nr_free_cma numa_hit numa_miss numa_foreign numa_interleave numa_local numa_other
nr_inactive_anon nr_active_anon nr_inactive_file nr_active_file nr_unevictable
nr_slab_reclaimable nr_slab_unreclaimable nr_isolated_anon nr_isolated_file workingset_nodes
workingset_refault_anon workingset_refault_file workingset_activate_anon workingset_activate_file
workingset_restore_anon workingset_restore_file workingset_nodereclaim nr_anon_pages nr_mapped
nr_file_pages nr_dirty nr_writeback nr_shmem nr_shmem_hugepages nr_shmem_pmdmapped
nr_file_hugepages nr_file_pmdmapped nr_anon_transparent_hugepages nr_vmscan_write
nr_vmscan_immediate_reclaim nr_dirtied nr_written nr_throttled_written nr_kernel_misc_reclaimable
nr_foll_pin_acquired nr_foll_pin_released nr_kernel_stack nr_page_table_pages
nr_sec_page_table_pages nr_iommu_pages nr_swapcached pgpromote_success pgpromote_candidate
pgpromote_candidate_nrl pgdemote_kswapd pgdemote_direct pgdemote_khugepaged pgdemote_proactive
nr_hugetlb nr_balloon_pages nr_kernel_file_pages nr_dirty_threshold nr_dirty_background_threshold
nr_memmap_pages nr_memmap_boot_pages pgpgin pgpgout pswpin pswpout pgalloc_dma pgalloc_dma32
pgalloc_normal pgalloc_movable pgalloc_device allocstall_dma allocstall_dma32 allocstall_normal
allocstall_movable allocstall_device pgskip_dma pgskip_dma32 pgskip_normal pgskip_movable
pgskip_device pgfree pgactivate pgdeactivate pglazyfree pgfault pgmajfault pglazyfreed pgrefill
pgreuse pgsteal_kswapd pgsteal_direct pgsteal_khugepaged pgsteal_proactive pgscan_kswapd
pgscan_direct pgscan_khugepaged pgscan_proactive pgscan_direct_throttle pgscan_anon pgscan_file
pgsteal_anon pgsteal_file zone_reclaim_success zone_reclaim_failed pginodesteal slabs_scanned
kswapd_inodesteal kswapd_low_wmark_hit_quickly kswapd_high_wmark_hit_quickly pageoutrun pgrotated
drop_pagecache drop_slab oom_kill numa_pte_updates numa_huge_pte_updates numa_hint_faults
numa_hint_faults_local numa_pages_migrated pgmigrate_success pgmigrate_fail thp_migration_success
thp_migration_fail thp_migration_split compact_migrate_scanned compact_free_scanned
compact_isolated compact_stall compact_fail compact_success compact_daemon_wake
compact_daemon_migrate_scanned compact_daemon_free_scanned htlb_buddy_alloc_success
htlb_buddy_alloc_fail unevictable_pgs_culled unevictable_pgs_scanned unevictable_pgs_rescued
unevictable_pgs_mlocked unevictable_pgs_munlocked unevictable_pgs_cleared
unevictable_pgs_stranded thp_fault_alloc thp_fault_fallback thp_fault_fallback_charge
thp_collapse_alloc thp_collapse_alloc_failed thp_file_alloc thp_file_fallback
thp_file_fallback_charge thp_file_mapped thp_split_page thp_split_page_failed
thp_deferred_split_page thp_underused_split_page thp_split_pmd thp_scan_exceed_none_pte
thp_scan_exceed_swap_pte thp_scan_exceed_share_pte thp_split_pud thp_zero_page_alloc
thp_zero_page_alloc_failed thp_swpout thp_swpout_fallback balloon_inflate balloon_deflate
balloon_migrate swap_ra swap_ra_hit swpin_zero swpout_zero ksm_swpin_copy cow_ksm zswpin zswpout
zswpwb direct_map_level2_splits direct_map_level3_splits direct_map_level2_collapses
direct_map_level3_collapses nr_unstable""".split()

# vmstat keys that stay 0 on this host (no swap, no balloon, no DMA zone use, no zswap).
VMSTAT_ZERO = ("pswp", "balloon", "_dma", "zswp", "zsp", "swap_ra", "swpin", "swpout", "ksm",
               "nr_unstable", "nr_free_cma", "allocstall_movable", "allocstall_device",
               "pgskip_", "hugetlb", "pgdemote", "pgpromote", "nr_sec_page", "numa_miss",
               "numa_foreign", "oom_kill", "drop_")


def write_proc_vmstat(t):
    """Every key of the vm-2cpu fixture: nr_* gauges in pages, the rest event counters."""
    lines = []
    for k in VMSTAT_KEYS:
        if any(z in k for z in VMSTAT_ZERO):
            v = 0
        elif k.startswith("nr_"):
            v = pick(10**3, 10**8, "vmstat", k)
        else:
            v = pick(10**4, 10**12, "vmstat", k)
        lines.append(f"{k} {v}")
    t.write("proc/vmstat", "\n".join(lines))


def psi_lines(key, full=True, scale=1.0):
    """Pressure-stall lines ("some avg10=.. avg60=.. avg300=.. total=N", then "full ...")."""
    out = []
    for kind in ("some", "full") if full else ("some",):
        f = 1.0 if kind == "some" else 0.6
        a10, a60, a300 = (pick(0, int(2000 * scale * f), key, kind, w) / 100 for w in (10, 60, 300))
        total = pick(0, int(10**10 * scale * f), key, kind, "total")
        out.append(f"{kind} avg10={a10:.2f} avg60={a60:.2f} avg300={a300:.2f} total={total}")
    return "\n".join(out)


def write_proc_misc(t, topo):
    """pressure/{cpu,memory,io}, loadavg, uptime."""
    t.write("proc/pressure/cpu", psi_lines("psi-cpu", scale=1.5))
    t.write("proc/pressure/memory", psi_lines("psi-memory", scale=0.2))
    t.write("proc/pressure/io", psi_lines("psi-io", scale=0.8))
    loads = [pick(topo.cpus * 20, topo.cpus * 60, "load", w) / 100 for w in (1, 5, 15)]
    t.write("proc/loadavg", f"{loads[0]:.2f} {loads[1]:.2f} {loads[2]:.2f} "
                            f"{pick(topo.cpus // 4, topo.cpus // 2, 'running')}/{pick(4000, 9000, 'threads')} "
                            f"{pick(300000, 4000000, 'lastpid')}")
    idle_s = sum(cpu_times(c)[3] for c in range(topo.cpus)) / HZ
    t.write("proc/uptime", f"{UPTIME_S}.37 {idle_s:.2f}")


# ----------------------------------------------------------------------------------------------
# Network: /proc/net/dev, /proc/net/snmp, /proc/net/netstat, /sys/class/net


class Nic:
    def __init__(self, i, n_compute):
        self.i = i
        if i < n_compute:  # a ConnectX-7 single-port RoCE NIC (compute fabric, one per GPU)
            bus = 0x18 + 0x10 * i
            self.name = f"enp{bus}s0np0"
            self.speed, self.mtu = 400000, 9000
        else:  # dual-port 200 GbE frontend/storage ports
            j = i - n_compute
            bus = 0xa0 + 0x10 * (j // 2)
            self.name = f"enp{bus}s0f{j % 2}np{j % 2}"
            self.speed, self.mtu = 200000, 9000 if j % 2 else 1500
        self.up = True
        self.ifindex = 424201 + i  # no live interface has it: the ethtool probe refuses it
        self.stats = nic_stats(self.name)

    def down(self):
        self.up = False
        self.speed = -1


STAT_FILES = ["collisions", "multicast", "rx_bytes", "rx_compressed", "rx_crc_errors", "rx_dropped",
              "rx_errors", "rx_fifo_errors", "rx_frame_errors", "rx_length_errors", "rx_missed_errors",
              "rx_nohandler", "rx_over_errors", "rx_packets", "tx_aborted_errors", "tx_bytes",
              "tx_carrier_errors", "tx_compressed", "tx_dropped", "tx_errors", "tx_fifo_errors",
              "tx_heartbeat_errors", "tx_packets", "tx_window_errors"]


def nic_stats(name, loopback=False):
    """The 24 files of statistics/ (the sysfs-class-net-statistics set of host-2socket)."""
    s = {f: 0 for f in STAT_FILES}
    s["rx_bytes"] = pick(10**12, 10**15, name, "rxb")
    s["tx_bytes"] = s["rx_bytes"] if loopback else pick(10**12, 10**15, name, "txb")
    s["rx_packets"] = s["rx_bytes"] // pick(600, 8000, name, "rxsz")
    s["tx_packets"] = s["rx_packets"] if loopback else s["tx_bytes"] // pick(600, 8000, name, "txsz")
    if not loopback:
        s["multicast"] = pick(10**3, 10**7, name, "mc")
        s["rx_dropped"] = pick(0, 10**5, name, "rxdrop")
        s["tx_dropped"] = pick(0, 100, name, "txdrop")
        s["rx_crc_errors"] = pick(0, 50, name, "crc")
        s["rx_missed_errors"] = pick(0, 10**4, name, "missed")
        s["rx_length_errors"] = pick(0, 10, name, "len")
        s["rx_nohandler"] = pick(0, 10**4, name, "nohandler")
        s["rx_errors"] = s["rx_crc_errors"] + s["rx_length_errors"]
    return s


def proc_net_dev_line(name, s):
    """One /proc/net/dev line (dev_seq_printf_stats' widths)."""
    frame = s["rx_length_errors"] + s["rx_over_errors"] + s["rx_crc_errors"] + s["rx_frame_errors"]
    carrier = (s["tx_carrier_errors"] + s["tx_aborted_errors"] + s["tx_window_errors"]
               + s["tx_heartbeat_errors"])
    drop = s["rx_dropped"] + s["rx_missed_errors"]
    return (f"{name:>6}:{s['rx_bytes']:>8} {s['rx_packets']:>7} {s['rx_errors']:>4} {drop:>4} "
            f"{s['rx_fifo_errors']:>4} {frame:>5} {s['rx_compressed']:>10} {s['multicast']:>9} "
            f"{s['tx_bytes']:>8} {s['tx_packets']:>7} {s['tx_errors']:>4} {s['tx_dropped']:>4} "
            f"{s['tx_fifo_errors']:>4} {s['collisions']:>5} {carrier:>7} {s['tx_compressed']:>10}")


def write_net(t, nics):
    """lo + the NICs in /proc/net/dev and /sys/class/net/<if>/ (carrier, duplex, mtu, operstate,
    speed, ifindex, statistics/*; device/ with the PCIe link files for the physical NICs: the
    files of host-2socket, config-2socket and host-ethtool-nics). Plain directories, not the
    symlinks into sys/devices a real host has (as in host-2socket)."""
    lo = nic_stats("lo", loopback=True)
    lines = ["Inter-|   Receive                                                |  Transmit",
             " face |bytes    packets errs drop fifo frame compressed multicast|"
             "bytes    packets errs drop fifo colls carrier compressed",
             proc_net_dev_line("lo", lo)]
    lines += [proc_net_dev_line(n.name, n.stats) for n in nics]
    t.write("proc/net/dev", "\n".join(lines))

    t.write_values("sys/class/net/lo", [("carrier", 1), ("duplex", "full"), ("mtu", 65536),
                                        ("operstate", "unknown"), ("ifindex", 1)])
    t.write_values("sys/class/net/lo/statistics", sorted(lo.items()))
    for n in nics:
        d = f"sys/class/net/{n.name}"
        t.write_values(d, [("carrier", 1 if n.up else 0), ("duplex", "full" if n.up else "unknown"),
                           ("mtu", n.mtu), ("operstate", "up" if n.up else "down"),
                           ("speed", n.speed), ("ifindex", n.ifindex)])
        t.write_values(f"{d}/statistics", sorted(n.stats.items()))
        t.write_values(f"{d}/device", [("vendor", "0x15b3"),  # Mellanox
                                       ("current_link_speed", "32.0 GT/s PCIe"),
                                       ("current_link_width", 16),
                                       ("max_link_speed", "32.0 GT/s PCIe"),
                                       ("max_link_width", 16)])


SNMP = [
    ("Ip", "Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams InUnknownProtos "
           "InDiscards InDelivers OutRequests OutDiscards OutNoRoutes ReasmTimeout ReasmReqds ReasmOKs "
           "ReasmFails FragOKs FragFails FragCreates OutTransmits"),
    ("Icmp", "InMsgs InErrors InCsumErrors InDestUnreachs InTimeExcds InParmProbs InSrcQuenchs "
             "InRedirects InEchos InEchoReps InTimestamps InTimestampReps InAddrMasks InAddrMaskReps "
             "OutMsgs OutErrors OutRateLimitGlobal OutRateLimitHost OutDestUnreachs OutTimeExcds "
             "OutParmProbs OutSrcQuenchs OutRedirects OutEchos OutEchoReps OutTimestamps "
             "OutTimestampReps OutAddrMasks OutAddrMaskReps"),
    ("IcmpMsg", "InType3 InType8 OutType0 OutType3"),
    ("Tcp", "RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets "
            "CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors"),
    ("Udp", "InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors "
            "IgnoredMulti MemErrors"),
    ("UdpLite", "InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors "
                "IgnoredMulti MemErrors"),
]

NETSTAT = [
    ("TcpExt", "SyncookiesSent SyncookiesRecv SyncookiesFailed EmbryonicRsts PruneCalled RcvPruned "
               "OfoPruned OutOfWindowIcmps LockDroppedIcmps ArpFilter TW TWRecycled TWKilled PAWSActive "
               "PAWSEstab BeyondWindow TSEcrRejected PAWSOldAck PAWSTimewait DelayedACKs DelayedACKLocked "
               "DelayedACKLost ListenOverflows ListenDrops TCPHPHits TCPPureAcks TCPHPAcks TCPRenoRecovery "
               "TCPSackRecovery TCPSACKReneging TCPSACKReorder TCPRenoReorder TCPTSReorder TCPFullUndo "
               "TCPPartialUndo TCPDSACKUndo TCPLossUndo TCPLostRetransmit TCPRenoFailures TCPSackFailures "
               "TCPLossFailures TCPFastRetrans TCPSlowStartRetrans TCPTimeouts TCPLossProbes "
               "TCPLossProbeRecovery TCPRenoRecoveryFail TCPSackRecoveryFail TCPRcvCollapsed "
               "TCPBacklogCoalesce TCPDSACKOldSent TCPDSACKOfoSent TCPDSACKRecv TCPDSACKOfoRecv "
               "TCPAbortOnData TCPAbortOnClose TCPAbortOnMemory TCPAbortOnTimeout TCPAbortOnLinger "
               "TCPAbortFailed TCPMemoryPressures TCPMemoryPressuresChrono TCPSACKDiscard "
               "TCPDSACKIgnoredOld TCPDSACKIgnoredNoUndo TCPSpuriousRTOs TCPMD5NotFound TCPMD5Unexpected "
               "TCPMD5Failure TCPSackShifted TCPSackMerged TCPSackShiftFallback TCPBacklogDrop "
               "PFMemallocDrop TCPMinTTLDrop TCPDeferAcceptDrop IPReversePathFilter TCPTimeWaitOverflow "
               "TCPReqQFullDoCookies TCPReqQFullDrop TCPRetransFail TCPRcvCoalesce TCPOFOQueue TCPOFODrop "
               "TCPOFOMerge TCPChallengeACK TCPSYNChallenge TCPFastOpenActive TCPFastOpenActiveFail "
               "TCPFastOpenPassive TCPFastOpenPassiveFail TCPFastOpenListenOverflow TCPFastOpenCookieReqd "
               "TCPFastOpenBlackhole TCPSpuriousRtxHostQueues BusyPollRxPackets TCPAutoCorking "
               "TCPFromZeroWindowAdv TCPToZeroWindowAdv TCPWantZeroWindowAdv TCPSynRetrans TCPOrigDataSent "
               "TCPHystartTrainDetect TCPHystartTrainCwnd TCPHystartDelayDetect TCPHystartDelayCwnd "
               "TCPACKSkippedSynRecv TCPACKSkippedPAWS TCPACKSkippedSeq TCPACKSkippedFinWait2 "
               "TCPACKSkippedTimeWait TCPACKSkippedChallenge TCPWinProbe TCPKeepAlive TCPMTUPFail "
               "TCPMTUPSuccess TCPDelivered TCPDeliveredCE TCPAckCompressed TCPZeroWindowDrop TCPRcvQDrop "
               "TCPWqueueTooBig TCPFastOpenPassiveAltKey TcpTimeoutRehash TcpDuplicateDataRehash "
               "TCPDSACKRecvSegs TCPDSACKIgnoredDubious TCPMigrateReqSuccess TCPMigrateReqFailure "
               "TCPPLBRehash TCPAORequired TCPAOBad TCPAOKeyNotFound TCPAOGood TCPAODroppedIcmps"),
    ("IpExt", "InNoRoutes InTruncatedPkts InMcastPkts OutMcastPkts InBcastPkts OutBcastPkts InOctets "
              "OutOctets InMcastOctets OutMcastOctets InBcastOctets OutBcastOctets InCsumErrors "
              "InNoECTPkts InECT1Pkts InECT0Pkts InCEPkts ReasmOverlaps"),
    ("MPTcpExt", "MPCapableSYNRX MPCapableSYNTX MPCapableSYNACKRX MPCapableACKRX MPCapableFallbackACK "
                 "MPCapableFallbackSYNACK MPCapableSYNTXDrop MPCapableSYNTXDisabled MPCapableEndpAttempt "
                 "MPFallbackTokenInit MPTCPRetrans MPJoinNoTokenFound MPJoinSynRx MPJoinSynBackupRx "
                 "MPJoinSynAckRx MPJoinSynAckBackupRx MPJoinSynAckHMacFailure MPJoinAckRx "
                 "MPJoinAckHMacFailure MPJoinRejected MPJoinSynTx MPJoinSynTxCreatSkErr "
                 "MPJoinSynTxBindErr MPJoinSynTxConnectErr DSSNotMatching DSSCorruptionFallback "
                 "DSSCorruptionReset InfiniteMapTx InfiniteMapRx DSSNoMatchTCP DataCsumErr OFOQueueTail "
                 "OFOQueue OFOMerge NoDSSInWindow DuplicateData AddAddr AddAddrTx AddAddrTxDrop EchoAdd "
                 "EchoAddTx EchoAddTxDrop PortAdd AddAddrDrop MPJoinPortSynRx MPJoinPortSynAckRx "
                 "MPJoinPortAckRx MismatchPortSynRx MismatchPortAckRx RmAddr RmAddrDrop RmAddrTx "
                 "RmAddrTxDrop RmSubflow MPPrioTx MPPrioRx MPFailTx MPFailRx MPFastcloseTx MPFastcloseRx "
                 "MPRstTx MPRstRx SubflowStale SubflowRecover SndWndShared RcvWndShared "
                 "RcvWndConflictUpdate RcvWndConflict MPCurrEstab Blackhole MPCapableDataFallback "
                 "MD5SigFallback DssFallback SimultConnectFallback FallbackFailed WinProbe"),
]

# Fields with a fixed meaning rather than a count (see proc.net.snmp's gauges and states).
SNMP_FIXED = {("Ip", "Forwarding"): 1, ("Ip", "DefaultTTL"): 64, ("Tcp", "RtoAlgorithm"): 1,
              ("Tcp", "RtoMin"): 200, ("Tcp", "RtoMax"): 120000, ("Tcp", "MaxConn"): -1}


def mib_text(tables):
    """Header/value line pairs: errors and rare events small, traffic large, MPTCP unused."""
    lines = []
    for proto, header in tables:
        fields = header.split()
        values = []
        for f in fields:
            if (proto, f) in SNMP_FIXED:
                v = SNMP_FIXED[(proto, f)]
            elif proto in ("MPTcpExt", "UdpLite") or "MD5" in f or f.startswith("TCPAO"):
                v = 0
            elif any(w in f for w in ("Err", "Fail", "Drop", "Discard", "Csum", "Abort", "Overflow",
                                      "Prune", "Reneg", "Syncookies", "Challenge", "NoRoute")):
                v = pick(0, 5000, proto, f)
            elif f == "CurrEstab":
                v = pick(200, 3000, proto, f)
            else:
                v = pick(10**5, 10**11, proto, f)
            values.append(str(v))
        lines.append(f"{proto}: " + " ".join(fields))
        lines.append(f"{proto}: " + " ".join(values))
    return "\n".join(lines)


def write_net_mib(t):
    """/proc/net/snmp and /proc/net/netstat with the protocols and fields of the vm-2cpu fixture."""
    t.write("proc/net/snmp", mib_text(SNMP))
    t.write("proc/net/netstat", mib_text(NETSTAT))


# ----------------------------------------------------------------------------------------------
# Storage: /proc/diskstats


def block_devices(n_disks):
    """(major, minor, name): idle loop devices (skipped by the probe, still in the file), the
    NVMe drives (nvme0n1 the boot disk with EFI and root partitions), md0 striped over the rest."""
    devs = [(7, i, f"loop{i}") for i in range(8)]
    minor = 0
    for d in range(n_disks):
        devs.append((259, minor, f"nvme{d}n1"))
        minor += 1
        if d == 0:
            for p in (1, 2):
                devs.append((259, minor, f"nvme0n1p{p}"))
                minor += 1
    if n_disks > 1:
        devs.append((9, 0, "md0"))
    return devs


def disk_fields(name):
    """The 17 counters of one NVMe drive."""
    reads = pick(10**6, 10**9, name, "reads")
    writes = pick(10**6, 10**9, name, "writes")
    discards = pick(0, 10**5, name, "discards")
    flushes = pick(10**3, 10**6, name, "flushes")
    return [reads, reads // pick(5, 50, name, "rmerge"), reads * pick(8, 512, name, "rsz"),
            reads // pick(5, 20, name, "rms"),
            writes, writes // pick(3, 30, name, "wmerge"), writes * pick(8, 512, name, "wsz"),
            writes // pick(3, 15, name, "wms"),
            pick(0, 64, name, "inflight"), pick(10**6, UPTIME_S * 900, name, "io_ms"),
            pick(10**7, 10**10, name, "weighted"),
            discards, 0, discards * pick(8, 4096, name, "dsz"), discards // 10,
            flushes, flushes // 4]


def write_diskstats(t, n_disks):
    """17 fields per device (5.5+ kernels, as vm-2cpu's vda): reads, merges, sectors, ms,
    writes ..., in flight, io_ms, weighted, discards ..., flushes. A partition holds a share of
    its disk's counts, md0 the sum of its members' (no flushes, no time: md does not count them)."""
    fields = {}
    for major, minor, name in block_devices(n_disks):
        if name.startswith("loop"):
            fields[name] = [0] * 17
        elif name.startswith("nvme0n1p"):  # nvme0n1p1 (EFI: ~1 %), nvme0n1p2 (root: the rest)
            share = 1 if name.endswith("p1") else 99
            fields[name] = [v * share // 100 for v in fields["nvme0n1"]]
        elif name == "md0":
            members = [f for n, f in fields.items() if n.startswith("nvme") and not n.startswith("nvme0n1")]
            f = [sum(col) for col in zip(*members)]
            for k in (3, 7, 8, 9, 10, 14, 15, 16):
                f[k] = 0
            fields[name] = f
        else:
            fields[name] = disk_fields(name)
    lines = [f"{major:>4} {minor:>7} {name} " + " ".join(map(str, fields[name]))
             for major, minor, name in block_devices(n_disks)]
    t.write("proc/diskstats", "\n".join(lines))


# ----------------------------------------------------------------------------------------------
# RDMA: /sys/class/infiniband


PMA_COUNTERS = ["VL15_dropped", "excessive_buffer_overrun_errors", "link_downed", "link_error_recovery",
                "local_link_integrity_errors", "multicast_rcv_packets", "multicast_xmit_packets",
                "port_rcv_constraint_errors", "port_rcv_data", "port_rcv_errors", "port_rcv_packets",
                "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors",
                "port_xmit_constraint_errors", "port_xmit_data", "port_xmit_discards", "port_xmit_packets",
                "port_xmit_wait", "symbol_error", "unicast_rcv_packets", "unicast_xmit_packets"]

HW_COUNTERS = ["duplicate_request", "implied_nak_seq_err", "lifespan", "local_ack_timeout_err", "np_cnp_sent",
               "np_ecn_marked_roce_packets", "out_of_buffer", "out_of_sequence", "packet_seq_err",
               "req_cqe_error", "req_cqe_flush_error", "req_remote_access_errors",
               "req_remote_invalid_request", "resp_cqe_error", "resp_cqe_flush_error",
               "resp_local_length_error", "resp_remote_access_errors", "rnr_nak_retry_err",
               "roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart", "roce_slow_restart_cnps",
               "roce_slow_restart_trans", "rp_cnp_handled", "rp_cnp_ignored", "rx_atomic_requests",
               "rx_dct_connect", "rx_icrc_encapsulated", "rx_read_requests", "rx_write_requests"]


def write_infiniband(t, n_hcas, nics):
    """mlx5_<k>/ports/1 in host-2hca's mlx5_0 layout (RoCE: link_layer Ethernet), 400 Gb/s,
    ACTIVE/LinkUp; the netdev in gid_attrs/ndevs/0 is NIC k when there is one."""
    for k in range(n_hcas):
        dev = f"sys/class/infiniband/mlx5_{k}"
        t.write_values(dev, [("fw_ver", "28.39.1002"), ("hca_type", "MT4129"), ("node_type", "1: CA")])
        port = f"{dev}/ports/1"
        t.write_values(port, [("state", "4: ACTIVE"), ("phys_state", "5: LinkUp"),
                              ("rate", "400 Gb/sec (4X NDR)"), ("link_layer", "Ethernet"), ("lid", "0x0")])
        if k < len(nics):
            t.write(f"{port}/gid_attrs/ndevs/0", nics[k].name)
        name = f"mlx5_{k}"
        words = pick(10**12, 10**14, name, "data")  # 4-octet words
        packets = words // pick(200, 1024, name, "words_per_packet")
        pma = {}
        for c in PMA_COUNTERS:
            if c.endswith("_data"):
                pma[c] = words + pick(0, 10**9, name, c)
            elif c.endswith("_packets"):
                pma[c] = (pick(10**3, 10**6, name, c) if c.startswith("multicast")
                          else packets + pick(0, 10**6, name, c))
            elif c == "port_xmit_wait":
                pma[c] = pick(10**6, 10**10, name, c)
            else:
                pma[c] = pick(0, 20, name, c)
        t.write_values(f"{port}/counters", sorted(pma.items()))
        hw = {}
        for c in HW_COUNTERS:
            if c == "lifespan":
                hw[c] = 10
            elif (c.startswith("rx_") and c.endswith("_requests")) or c.startswith(("np_", "rp_cnp_handled")):
                hw[c] = pick(10**4, 10**9, name, c)
            else:
                hw[c] = pick(0, 500, name, c)
        t.write_values(f"{port}/hw_counters", sorted(hw.items()))


# ----------------------------------------------------------------------------------------------
# cgroup v2: /sys/fs/cgroup


SERVICES = ["acpid.service", "atd.service", "auditd.service", "chrony.service", "containerd.service",
            "cron.service", "dbus.service", "dcgm-exporter.service", "fluent-bit.service",
            "getty@tty1.service", "irqbalance.service", "kubelet.service", "lldpd.service",
            "mdmonitor.service", "multipathd.service", "munge.service", "networkd-dispatcher.service",
            "node-exporter.service", "nv_peer_mem.service", "nvidia-dcgm.service",
            "nvidia-fabricmanager.service", "nvidia-persistenced.service", "openibd.service",
            "polkit.service", "rasdaemon.service", "rdma-ndd.service", "rsyslog.service",
            "serial-getty@ttyS0.service", "smartd.service", "snapd.service", "ssh.service", "sssd.service",
            "systemd-journald.service", "systemd-logind.service", "systemd-networkd.service",
            "systemd-resolved.service", "systemd-timesyncd.service", "systemd-udevd.service",
            "udisks2.service", "unattended-upgrades.service"]

MEMORY_STAT_KEYS = """anon file kernel kernel_stack pagetables sec_pagetables percpu sock vmalloc shmem
zswap zswapped file_mapped file_dirty file_writeback swapcached anon_thp file_thp shmem_thp
inactive_anon active_anon inactive_file active_file unevictable slab_reclaimable
slab_unreclaimable slab workingset_refault_anon workingset_refault_file workingset_activate_anon
workingset_activate_file workingset_restore_anon workingset_restore_file workingset_nodereclaim
pgscan pgsteal pgscan_kswapd pgscan_direct pgscan_khugepaged pgsteal_kswapd pgsteal_direct
pgsteal_khugepaged pgfault pgmajfault pgrefill pgactivate pgdeactivate pglazyfree pglazyfreed
zswpin zswpout thp_fault_alloc thp_collapse_alloc""".split()

CONTROLLERS = "cpuset cpu io memory hugetlb pids rdma misc"
SUBTREE = "cpuset cpu io memory pids"


class Cgroup:
    """One cgroup: its path relative to the cgroup root, kind (slice, service, scope, pod),
    weight (a scale for its usage) and CPU/memory limits."""

    def __init__(self, path, kind, weight, cpu_quota=None, mem_max=None, parent=False):
        self.path, self.kind, self.weight = path, kind, weight
        self.cpu_quota, self.mem_max, self.parent = cpu_quota, mem_max, parent


def pod_uid(k):
    h = hashlib.blake2b(f"pod{k}".encode(), digest_size=16).hexdigest()
    return f"{h[:8]}_{h[8:12]}_4{h[13:16]}_{h[16:20]}_{h[20:32]}"


def cgroup_plan(n):
    """Exactly n cgroups, all in the probe's default set (see the module docstring)."""
    if n == 0:
        return []
    if n < 6:
        sys.exit("make_bighost.py: --cgroups must be 0 or at least 6 (the slices themselves)")
    rest = n - 6
    n_services = min(64, rest // 3)
    n_pods = rest - n_services
    plan = [Cgroup("init.scope", "scope", 0.01),
            Cgroup("kubepods.slice", "slice", 0.9, parent=True),
            Cgroup("system.slice", "slice", 0.08, parent=True),
            Cgroup("user.slice", "slice", 0.02),
            Cgroup("kubepods.slice/kubepods-besteffort.slice", "slice", 0.01),
            Cgroup("kubepods.slice/kubepods-burstable.slice", "slice", 0.05)]
    for k in range(n_services):
        name = SERVICES[k] if k < len(SERVICES) else f"data-cache@{k - len(SERVICES)}.service"
        quota = 200000 if k % 8 == 7 else None  # CPUQuota=200% on some services
        mem = pick(1, 16, name, "memmax") << 30 if k % 4 == 3 else None
        plan.append(Cgroup(f"system.slice/{name}", "service", pick(1, 100, name, "w") / 10000, quota, mem))
    for k in range(n_pods):
        path = f"kubepods.slice/kubepods-pod{pod_uid(k)}.slice"
        cores = pick(1, 16, path, "cores")
        plan.append(Cgroup(path, "pod", 0.85 / max(1, n_pods) * cores / 8, cores * 100000,
                           pick(4, 128, path, "mem") << 30))
    return plan


def cgroup_files(c, topo, devices):
    """The interface files of one non-root cgroup, as in host-cgroup2: (name, content)."""
    p = c.path
    usage = int(UPTIME_S * 10**6 * topo.cpus * 0.5 * c.weight) + pick(10**6, 10**9, p, "usage")
    user = usage * pick(70, 95, p, "user") // 100
    if c.cpu_quota:
        periods = pick(10**5, 10**7, p, "periods")
        throttled = periods // pick(5, 200, p, "thr")
        throttled_us = throttled * pick(1000, 50000, p, "thr_us")
    else:
        periods = throttled = throttled_us = 0
    cpu_stat = (f"usage_usec {usage}\nuser_usec {user}\nsystem_usec {usage - user}\n"
                f"core_sched.force_idle_usec 0\nnr_periods {periods}\nnr_throttled {throttled}\n"
                f"throttled_usec {throttled_us}\nnr_bursts 0\nburst_usec 0")

    anon = pick(1 << 24, 1 << 31, p, "anon") * max(1, int(c.weight * 400))
    file = pick(1 << 22, 1 << 32, p, "file") * max(1, int(c.weight * 200))
    mem = {k: 0 for k in MEMORY_STAT_KEYS}
    mem.update(anon=anon, file=file, kernel_stack=pick(16, 4096, p, "ks") * 16384,
               pagetables=anon // 500, percpu=pick(1, 1000, p, "pcpu") * 64 * topo.cpus,
               sock=pick(0, 1 << 24, p, "sock"), vmalloc=pick(0, 1 << 20, p, "vmalloc"),
               shmem=pick(0, 1 << 28, p, "shmem"), file_mapped=file // pick(2, 20, p, "mapped"),
               file_dirty=pick(0, 1 << 26, p, "dirty"), file_writeback=pick(0, 1 << 20, p, "wb"),
               anon_thp=(anon // 2) >> 21 << 21, inactive_anon=anon // 3,
               inactive_file=file // 2, active_file=file - file // 2,
               slab_reclaimable=pick(1 << 20, 1 << 30, p, "sr"),
               slab_unreclaimable=pick(1 << 20, 1 << 28, p, "su"))
    mem["active_anon"] = anon - mem["inactive_anon"] + mem["shmem"]
    mem["slab"] = mem["slab_reclaimable"] + mem["slab_unreclaimable"]
    mem["kernel"] = (mem["kernel_stack"] + mem["pagetables"] + mem["percpu"] + mem["vmalloc"]
                     + mem["slab"])
    for k in ("workingset_refault_anon", "workingset_refault_file", "workingset_activate_anon",
              "workingset_activate_file", "workingset_restore_file", "pgscan", "pgsteal",
              "pgscan_kswapd", "pgsteal_kswapd", "pgrefill", "pgactivate", "pgdeactivate",
              "thp_fault_alloc"):
        mem[k] = pick(0, 10**7, p, k)
    mem["pgfault"] = pick(10**5, 10**10, p, "pgfault")
    mem["pgmajfault"] = pick(0, 10**5, p, "pgmajfault")
    current = mem["anon"] + mem["file"] + mem["kernel"] + mem["sock"]
    memory_stat = "\n".join(f"{k} {mem[k]}" for k in MEMORY_STAT_KEYS)

    limited = c.mem_max is not None
    events = (f"low 0\nhigh 0\nmax {pick(0, 500, p, 'evmax') if limited else 0}\n"
              f"oom {pick(0, 3, p, 'oom') if limited else 0}\n"
              f"oom_kill {pick(0, 2, p, 'oomk') if limited else 0}\noom_group_kill 0")

    io_lines = []
    if pick(0, 4, p, "io") > 0:  # some services never did I/O: an empty io.stat
        for major, minor, name in devices:
            if name.startswith("loop") or pick(0, 2, p, name) == 0:
                continue
            rios, wios = pick(10, 10**7, p, name, "r"), pick(10, 10**7, p, name, "w")
            dios = pick(0, 1000, p, name, "d")
            io_lines.append(f"{major}:{minor} rbytes={rios * 4096 * pick(1, 64, p, name, 'rs')} "
                            f"wbytes={wios * 4096 * pick(1, 64, p, name, 'ws')} rios={rios} wios={wios} "
                            f"dbytes={dios << 20} dios={dios}")

    procs = "" if c.parent else "\n".join(str(pick(2, 4_000_000, p, "pid", i))
                                          for i in range(pick(1, 12, p, "nproc")))
    files = [
        ("cgroup.controllers", CONTROLLERS), ("cgroup.procs", procs), ("cgroup.type", "domain"),
        ("cpu.max", f"{c.cpu_quota} 100000" if c.cpu_quota else "max 100000"),
        ("cpu.pressure", psi_lines((p, "cpu"), scale=0.5)), ("cpu.stat", cpu_stat),
        ("io.pressure", psi_lines((p, "io"), scale=0.2)), ("io.stat", "\n".join(io_lines)),
        ("memory.current", current), ("memory.events", events),
        ("memory.max", c.mem_max if limited else "max"),
        ("memory.pressure", psi_lines((p, "memory"), scale=0.1)), ("memory.stat", memory_stat),
    ]
    if c.parent:
        files.append(("cgroup.subtree_control", SUBTREE))
    return files


def write_cgroups(t, topo, n_cgroups, n_disks):
    """The hierarchy root (the files of host-cgroup2's root: no cgroup.type, as on a host) and
    the planned cgroups; returns how many cgroups were written."""
    plan = cgroup_plan(n_cgroups)
    if not plan:
        return 0
    base = "sys/fs/cgroup"
    devices = block_devices(n_disks)
    usage = UPTIME_S * 10**6 * topo.cpus // 2
    t.write_values(base, [
        ("cgroup.controllers", CONTROLLERS), ("cgroup.subtree_control", SUBTREE),
        ("cgroup.procs", "\n".join(str(p) for p in range(2, 2 + 3 * topo.cpus))),  # kernel threads
        ("cpu.stat", f"usage_usec {usage}\nuser_usec {usage * 85 // 100}\nsystem_usec {usage * 15 // 100}\n"
                     f"core_sched.force_idle_usec 0\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n"
                     f"nr_bursts 0\nburst_usec 0"),
        ("cpu.pressure", psi_lines("root-cpu", scale=1.5)),
        ("memory.pressure", psi_lines("root-memory", scale=0.2)),
        ("io.pressure", psi_lines("root-io", scale=0.8)),
        ("io.stat", "\n".join(f"{ma}:{mi} rbytes={pick(10**12, 10**14, n, 'rb')} "
                              f"wbytes={pick(10**12, 10**14, n, 'wb')} rios={pick(10**6, 10**9, n, 'ri')} "
                              f"wios={pick(10**6, 10**9, n, 'wi')} dbytes=0 dios=0"
                              for ma, mi, n in devices if not n.startswith("loop"))),
    ])
    for c in plan:
        t.write_values(f"{base}/{c.path}", cgroup_files(c, topo, devices))
    return len(plan)


# ----------------------------------------------------------------------------------------------
# Power and thermal: /sys/class/hwmon, /sys/class/powercap, /sys/class/thermal


def write_power_thermal(t, topo, n_disks):
    """hwmon: a coretemp chip per socket (temp1 "Package id S", then "Core N" per core) and an
    nvme chip per drive ("Composite"); RAPL package-S with its dram subzone; one x86_pkg_temp
    thermal zone per socket. Files and units as in host-2socket (millidegrees, microjoules)."""
    chip = 0
    for s in range(topo.sockets):
        d = f"sys/class/hwmon/hwmon{chip}"
        t.write(f"{d}/name", "coretemp")
        sensors = [("Package id %d" % s, 1)] + [(f"Core {c}", c + 2) for c in range(topo.cores_per_socket)]
        for label, n in sensors:
            t.write_values(d, [(f"temp{n}_input", pick(38000, 82000, "coretemp", s, n)),
                               (f"temp{n}_label", label), (f"temp{n}_max", 100000), (f"temp{n}_crit", 100000)])
        chip += 1
    for k in range(n_disks):
        d = f"sys/class/hwmon/hwmon{chip}"
        t.write(f"{d}/name", "nvme")
        t.write_values(d, [("temp1_input", pick(30850, 55850, "nvme-temp", k)), ("temp1_label", "Composite"),
                           ("temp1_max", 84850), ("temp1_crit", 89850)])
        chip += 1

    t.write("sys/class/powercap/intel-rapl/enabled", "1")
    for s in range(topo.sockets):
        z = f"sys/class/powercap/intel-rapl:{s}"
        t.write_values(z, [("name", f"package-{s}"), ("enabled", 1), ("constraint_0_name", "long_term"),
                           ("energy_uj", pick(10**9, 262143328850, "rapl", s)),
                           ("max_energy_range_uj", 262143328850)])
        t.write_values(f"{z}/intel-rapl:{s}:0", [("name", "dram"), ("enabled", 1),
                                                 ("energy_uj", pick(10**9, 65712999613, "rapl-dram", s)),
                                                 ("max_energy_range_uj", 65712999613)])
    for s in range(topo.sockets):
        t.write_values(f"sys/class/thermal/thermal_zone{s}",
                       [("type", "x86_pkg_temp"), ("temp", pick(40000, 80000, "pkg-temp", s))])


# ----------------------------------------------------------------------------------------------
# Host identity and configuration (reveal's host info and config snapshot)


def write_host_config(t):
    """The files of config-2socket, for a host with the NVIDIA and MLNX_OFED drivers."""
    t.write("proc/sys/kernel/hostname", "bighost-h200")
    t.write("proc/sys/kernel/osrelease", KERNEL)
    t.write("proc/sys/kernel/numa_balancing", "0")
    t.write("proc/sys/kernel/nmi_watchdog", "0")
    t.write("proc/sys/vm/swappiness", "60")
    t.write("proc/sys/vm/nr_hugepages", "0")
    t.write("proc/cmdline", f"BOOT_IMAGE=/boot/vmlinuz-{KERNEL} root=UUID=3b6f0c1e-8a77-4d3c-9a4e-2f1c1d2e3f40 "
                            "ro intel_iommu=on iommu=pt pci=realloc=off numa_balancing=disable")
    t.write("proc/driver/nvidia/version",
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
            "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)")
    for size, n in (("2048kB", 0), ("1048576kB", 0)):
        t.write(f"sys/kernel/mm/hugepages/hugepages-{size}/nr_hugepages", str(n))
    t.write("sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never")
    t.write("sys/kernel/mm/transparent_hugepage/defrag", "always defer defer+madvise [madvise] never")
    for module, version in (("mlx5_core", "24.04-0.6.6"), ("nvidia", "550.54.15"),
                            ("nvidia_peermem", "550.54.15"), ("tcp_cubic", "")):
        t.write(f"sys/module/{module}/version", version)


# ----------------------------------------------------------------------------------------------


def prepare(out):
    """Makes OUT_DIR ready: missing or empty, or a previous tree of ours (proc/ and sys/ removed)."""
    if os.path.realpath(out) == "/":
        sys.exit("make_bighost.py: refusing to write into /")
    if os.path.isdir(out) and os.listdir(out):
        if not os.path.exists(os.path.join(out, MARKER)):
            sys.exit(f"make_bighost.py: {out} is not empty and was not made by this script "
                     f"(no {MARKER}); give an empty or new directory")
        for sub in ("proc", "sys"):
            shutil.rmtree(os.path.join(out, sub), ignore_errors=True)
    os.makedirs(out, exist_ok=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", metavar="OUT_DIR")
    ap.add_argument("--cpus", type=int, default=224)
    ap.add_argument("--cpuidle-states", type=int, default=4)
    ap.add_argument("--nics", type=int, default=16, help="physical NICs (lo comes on top)")
    ap.add_argument("--hcas", type=int, default=8)
    ap.add_argument("--cgroups", type=int, default=200, help="0, or at least 6")
    ap.add_argument("--disks", type=int, default=8, help="NVMe drives")
    a = ap.parse_args()
    for name in ("cpus", "cpuidle_states", "nics", "hcas", "cgroups", "disks"):
        if getattr(a, name) < (1 if name == "cpus" else 0):
            ap.error(f"--{name.replace('_', '-')} out of range")

    prepare(a.out_dir)
    t = Tree(a.out_dir)
    topo = Topology(a.cpus)

    write_proc_stat(t, topo, n_irqs=256 + 8 * a.cpus)
    write_proc_cpuinfo(t, topo)
    write_proc_schedstat(t, topo)
    write_cpu_sysfs(t, topo)
    write_cpuidle(t, topo, a.cpuidle_states)
    write_proc_meminfo(t, topo)
    write_proc_vmstat(t)
    write_proc_misc(t, topo)

    nics = [Nic(i, n_compute=min(a.hcas, a.nics)) for i in range(a.nics)]
    if a.nics > a.hcas + 1:
        nics[-1].down()  # an unplugged frontend port: carrier 0, speed -1
    write_net(t, nics)
    write_net_mib(t)
    write_diskstats(t, a.disks)
    write_infiniband(t, a.hcas, nics)
    n_cg = write_cgroups(t, topo, a.cgroups, a.disks)
    write_power_thermal(t, topo, a.disks)
    write_host_config(t)

    with open(os.path.join(a.out_dir, MARKER), "w") as f:
        f.write(f"made by bench/bighost/make_bighost.py --cpus {a.cpus} --cpuidle-states {a.cpuidle_states} "
                f"--nics {a.nics} --hcas {a.hcas} --cgroups {a.cgroups} --disks {a.disks}\n")
    print(f"{a.out_dir}: {t.files} files; {a.cpus} CPUs ({topo.sockets} sockets x "
          f"{topo.cores_per_socket} cores x {topo.smt} threads), {a.cpuidle_states} idle states, "
          f"lo + {a.nics} NICs, {a.hcas} HCAs, {a.disks} NVMe drives, {n_cg} cgroups")


if __name__ == "__main__":
    main()
