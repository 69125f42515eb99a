// The GPU part of the configuration snapshot (reveal/host_config.h), read through NVML.
//
// read_nvml_config(library, out) loads `library` (dlopen, as the nvml probe does), calls
// nvmlInit_v2, reads the settings below and shuts NVML down again. Each key is independent:
// an entry point the driver lacks, or a call answering an error (NOT_SUPPORTED on a board
// without ECC or MIG, GPU_IS_LOST...), omits that key only. Nothing is added when the library
// is absent or nvmlInit_v2 fails. N is the NVML device index, as in the nvml probe's channels.
//
//   gpu.driver_version         nvmlSystemGetDriverVersion        e.g. "580.159.03"
//   gpu.nvml_version           nvmlSystemGetNVMLVersion
//   gpu.cuda_driver_version    nvmlSystemGetCudaDriverVersion_v2 "13.0" (from 13000)
//   gpu.count                  nvmlDeviceGetCount_v2
//   gpu.N.name, gpu.N.uuid, gpu.N.vbios_version
//   gpu.N.persistence_mode     "Enabled" / "Disabled"            nvmlDeviceGetPersistenceMode
//   gpu.N.ecc_mode.current, gpu.N.ecc_mode.pending   "Enabled" / "Disabled"  nvmlDeviceGetEccMode
//   gpu.N.mig_mode.current, gpu.N.mig_mode.pending   "Enabled" / "Disabled"  nvmlDeviceGetMigMode
//   gpu.N.compute_mode         "Default" / "Exclusive_Thread" / "Prohibited" / "Exclusive_Process"
//                              (nvidia-smi's names)               nvmlDeviceGetComputeMode
//   gpu.N.power_limit_w        power management limit, W          nvmlDeviceGetPowerManagementLimit
//   gpu.N.default_power_limit_w                                   ...DefaultLimit
//   gpu.N.enforced_power_limit_w                                  nvmlDeviceGetEnforcedPowerLimit
//   gpu.N.applications_clocks.{sm,mem}_mhz                        nvmlDeviceGetApplicationsClock
//   gpu.N.default_applications_clocks.{sm,mem}_mhz                ...DefaultApplicationsClock
//   gpu.N.pcie.max_link_gen, gpu.N.pcie.max_link_width, gpu.N.pcie.current_link_width
//     The current link *generation* is left out on purpose: GPUs lower it whenever they idle
//     (power saving), so it would make a "configuration change" every few seconds; it is a
//     time series instead (nvml:pcie_link_gen_current). A narrower current width than the
//     maximum is a real misconfiguration (bad riser, wrong slot) and is kept.
//
// Watts are printed with up to three decimals, trailing zeros dropped ("700", "312.5").
// read_nvml_config() loads, initialises and shuts NVML down on every call (for one-off reads
// and tests). The registered config source uses read_nvml_config_cached() instead: one NVML
// session per library path, opened at the first read and kept for the process's life, since
// re-initialising NVML every ~10 s costs far more CPU than the reads themselves; a failed
// load or init is retried at the next read.
#pragma once

#include <string>

#include "reveal/recording.h"

namespace reveal::telemetry::nvml {

void read_nvml_config(const std::string& library_path, ConfigSnapshot& out);
void read_nvml_config_cached(const std::string& library_path, ConfigSnapshot& out);

}  // namespace reveal::telemetry::nvml
