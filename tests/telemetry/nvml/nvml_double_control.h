// Test helpers around the NVML test double (nvml_double.cpp): its control functions, looked
// up with dlsym on the same library the code under test dlopens, and an environment guard for
// $REVEAL_NVML_LIBRARY.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace reveal::testing {

// The double's control functions, from the same handle the probe gets.
struct NvmlDouble {
  void* handle = nullptr;
  void (*reset)() = nullptr;
  void (*set_lost_after)(int, int) = nullptr;
  void (*add_xid)(int, unsigned long long, int) = nullptr;
  void (*set_init_result)(int) = nullptr;
  int (*init_refcount)() = nullptr;
  int (*gpm_samples_in_use)() = nullptr;
  long (*ecc_calls)() = nullptr;

  static NvmlDouble& get() {
    static NvmlDouble d = [] {
      NvmlDouble x;
      x.handle = ::dlopen(REVEAL_NVML_DOUBLE_PATH, RTLD_NOW | RTLD_LOCAL);  // kept for the process
      if (!x.handle) return x;
      auto sym = [&](const char* n) { return ::dlsym(x.handle, n); };
      x.reset = reinterpret_cast<void (*)()>(sym("nvml_double_reset"));
      x.set_lost_after = reinterpret_cast<void (*)(int, int)>(sym("nvml_double_set_lost_after"));
      x.add_xid = reinterpret_cast<void (*)(int, unsigned long long, int)>(sym("nvml_double_add_xid"));
      x.set_init_result = reinterpret_cast<void (*)(int)>(sym("nvml_double_set_init_result"));
      x.init_refcount = reinterpret_cast<int (*)()>(sym("nvml_double_init_refcount"));
      x.gpm_samples_in_use = reinterpret_cast<int (*)()>(sym("nvml_double_gpm_samples_in_use"));
      x.ecc_calls = reinterpret_cast<long (*)()>(sym("nvml_double_ecc_calls"));
      return x;
    }();
    return d;
  }
};

// Restores an environment variable on scope exit.
class EnvGuard {
 public:
  explicit EnvGuard(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v;
  }
  ~EnvGuard() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace reveal::testing
