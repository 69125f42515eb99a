// `reveal record`: sample every available probe at a fixed rate into a store, optionally
// while running a command (whose exit status becomes ours).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <thread>

#include <fmt/format.h>

#include "commands.h"
#include "reveal/host_info.h"
#include "reveal/recorder.h"
#include "reveal/tenants.h"
#include "reveal/sampler.h"
#include "reveal/units.h"
#include "time_arg.h"
#include "util/open_files_limit.h"

namespace reveal::cli {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
std::atomic<pid_t> g_child{0};

void on_signal(int sig) {
  g_signal.store(sig);
  g_stop.store(true);
  if (pid_t c = g_child.load(); c > 0 && sig != SIGINT) kill(c, SIGTERM);  // SIGINT reaches the group
}

void install_handlers() {
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: interrupt the sampler's sleep
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);  // a closed terminal or ssh session ends the run cleanly
}

std::string join_command(const std::vector<std::string>& cmd) {
  std::string s;
  for (const auto& a : cmd) {
    if (!s.empty()) s += ' ';
    s += a.find_first_of(" \t'\"") == std::string::npos ? a : "'" + a + "'";
  }
  return s;
}

pid_t spawn(const std::vector<std::string>& cmd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork: " + std::string(std::strerror(errno)));
  if (pid == 0) {
    std::vector<char*> argv;
    for (const auto& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    reveal::restore_open_files_limit();  // CMD gets the limit its shell gave us
    execvp(argv[0], argv.data());
    int err = errno;
    (void)!write(fds[1], &err, sizeof err);
    _exit(127);
  }
  close(fds[1]);
  int err = 0;
  ssize_t n = read(fds[0], &err, sizeof err);
  close(fds[0]);
  if (n == sizeof err) {
    waitpid(pid, nullptr, 0);
    throw std::runtime_error("cannot run '" + cmd[0] + "': " + std::strerror(err));
  }
  return pid;
}

}  // namespace

Action add_record(CLI::App& app) {
  struct Opts {
    std::string out, root = "/", interval = "1s", duration, config_interval = "60s", priority = "realtime";
    std::vector<std::string> include, exclude, command;
    bool quiet = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand("record", "Record telemetry into a store, optionally while running a command");
  set_help_footer(sub,
                  {"reveal record -o run.db --interval 1s --duration 10m",
                   "reveal record -o run.db -- python3 train.py --epochs 3",
                   "reveal record -o run.db --probes 'proc.*,nvml' --interval 500ms --duration 90s"},
                  {"0  also when SIGINT or SIGTERM ends a recording without a command (the store is finished cleanly)",
                   "N  with -- CMD: CMD's exit status (128 + the signal's number when a signal ended it)"});
  sub->add_option("-o,--output", o->out, "Store file to create (overwritten)")->required();
  sub->add_option("--interval", o->interval, "Sampling interval, e.g. 1s, 100ms")->capture_default_str();
  sub->add_option("--duration", o->duration, "Stop after this long, e.g. 60s, 2m (default: until CMD exits or SIGINT)");
  sub->add_option("--root", o->root, "Read /proc and /sys under this directory (e.g. /host)")->capture_default_str();
  sub->add_option("--probes", o->include, "Only these probes (names, or prefixes ending in *)")->delimiter(',');
  sub->add_option("--exclude", o->exclude, "Skip these probes")->delimiter(',');
  sub->add_option("--config-interval", o->config_interval,
                  "Re-read the host configuration this often (about 1.5 ms of CPU each); a change is recorded as an event")
      ->capture_default_str();
  sub->add_option("--sampling-priority", o->priority,
                  "realtime: sample at real-time priority 1 when permitted, within a CPU budget, so that samples "
                  "keep coming on a saturated host (else one line, and normal priority); normal: as started")
      ->check(CLI::IsMember({"realtime", "normal"}))
      ->capture_default_str();
  sub->add_flag("-q,--quiet", o->quiet, "Print nothing but errors");
  sub->add_option("command", o->command, "Command to run and record (after --)");
  sub->positionals_at_end();
  return [o]() -> int {
    const std::chrono::nanoseconds interval{parse_duration_arg("--interval", o->interval, 1'000'000)};
    const std::chrono::nanoseconds config_every{parse_duration_arg("--config-interval", o->config_interval, 1'000'000)};
    const std::chrono::nanoseconds duration{o->duration.empty() ? 0 : parse_duration_arg("--duration", o->duration, 1)};
    if (o->command.empty() && duration.count() == 0 && !o->quiet)
      std::fprintf(stderr, "reveal: recording until SIGINT (Ctrl-C) or SIGTERM\n");

    if (o->out.empty()) throw UsageError("--output: empty path");
    check_root(o->root);
    Sampler sampler(select_probes(o->include, o->exclude), o->root);
    RunMetadata meta;
    fill_host_info(o->root, meta);
    meta.interval_s = double(interval.count()) * 1e-9;
    meta.command = join_command(o->command);
    meta.root = o->root;
    meta.reveal_version = kVersion;
    meta.probes = sampler.probe_records();
    // Start the command before touching the store: a command that cannot run leaves an
    // existing store at -o intact.
    install_handlers();
    std::thread waiter;
    std::atomic<int> child_status{-1};
    auto stop_child = [&] {
      if (!waiter.joinable()) return;
      if (child_status.load() < 0) kill(g_child.load(), SIGTERM);  // duration ended or signalled
      waiter.join();
    };
    if (!o->command.empty()) {
      pid_t pid = spawn(o->command);
      g_child.store(pid);
      waiter = std::thread([pid, &child_status] {
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
        child_status.store(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
        g_stop.store(true);
      });
    }
    meta.start_unix_ns = realtime_ns();
    // Configuration: snapshot now, re-read every --config-interval (rounded to samples).
    std::unique_ptr<Recorder> recorder;
    try {
      recorder = std::make_unique<Recorder>(o->out, meta, sampler.channels(), o->root,
                                            std::size_t(std::max<std::int64_t>(1, config_every.count() / interval.count())));
    } catch (...) {
      stop_child();
      throw;
    }
    if (has_probe(meta, "cgroup")) {  // tenant scans follow the cgroup probe's selection
      std::string why;
      if (!recorder->enable_tenant_scans(o->root, kTenantScanPeriod, why) && !o->quiet)
        std::fprintf(stderr, "reveal: no tenant scans (incidents will not name cgroups): %s\n", why.c_str());
    }
    if (!o->quiet) {
      std::size_t avail = 0;
      for (auto& p : meta.probes) avail += p.available;
      std::fprintf(stderr, "reveal: recording %zu channels from %zu/%zu probes every %s into %s\n",
                   sampler.channels().size(), avail, meta.probes.size(), o->interval.c_str(), o->out.c_str());
    }

    const std::size_t max_samples =
        duration.count() ? std::size_t(duration.count() / interval.count()) + 1 : 0;
    std::int64_t last_t = meta.start_unix_ns;
    std::string write_error;
    SamplingPriority priority;
    priority.realtime = o->priority == "realtime";
    priority.note = [quiet = o->quiet](const std::string& line) {
      if (!quiet) std::fprintf(stderr, "reveal: %s\n", line.c_str());
    };
    sampler.set_priority(std::move(priority));
    sampler.run(interval, max_samples, g_stop, [&](std::int64_t t, std::span<const double> row) {
      if (!write_error.empty()) return;
      try {
        recorder->append(t, row, sampler.events());
        last_t = t;
      } catch (const std::exception& e) {
        write_error = e.what();
        g_stop.store(true);
      }
    });
    int exit_code = 0;
    if (waiter.joinable()) {
      stop_child();
      exit_code = child_status.load();
    }
    try {
      recorder->finish(last_t, exit_code);
    } catch (const std::exception&) {
      if (write_error.empty()) throw;  // a failed write came first: that is the error to report
    }
    const std::size_t written = recorder->samples_written();
    if (!write_error.empty()) {
      error(write_error + " (the store keeps the " + std::to_string(written) + " samples written before)");
      return kExitInput;
    }
    if (!o->quiet)
      std::fprintf(stderr, "reveal: wrote %zu sample%s to %s\n", written, written == 1 ? "" : "s", o->out.c_str());
    if (!o->command.empty()) return exit_code;
    return kExitOk;  // SIGINT/SIGTERM is the normal way to end an open-ended recording
  };
}

}  // namespace reveal::cli
