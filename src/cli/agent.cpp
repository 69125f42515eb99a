// `reveal agent`: the per-host daemon (src/agent/agent_runtime.h, docs/AGENT.md).
#ifdef REVEAL_WITH_HTTP
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <filesystem>

#include "agent/agent_runtime.h"
#include "commands.h"
#include "reveal/agent_config.h"
#include "reveal/units.h"
#include "time_arg.h"

namespace reveal::cli {

Action add_agent(CLI::App& app) {
  struct Opts {
    std::string config, listen, store, replay, interval, root, store_max_size, store_max_age, priority;
    std::vector<std::string> probes, exclude;
    bool check_config = false, exit_after_replay = false, quiet = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand(
      "agent", "Run the per-host daemon: sample continuously, detect in streaming mode, serve /metrics for Prometheus");
  set_help_footer(sub,
                  {"reveal agent --config /etc/reveal/agent.toml",
                   "reveal agent --listen 127.0.0.1:9797 --store /var/lib/reveal/agent.db --store-max-size 1GiB",
                   "reveal agent --replay run.db --listen 127.0.0.1:9800 --store /tmp/replay.db"},
                  {"0  also after SIGTERM or SIGINT, which flush the store (SIGHUP reloads the configuration file)"});
  sub->add_option("--config", o->config, "TOML configuration file (deploy/reveal-agent.toml documents every key)");
  sub->add_flag("--check-config", o->check_config, "Load the configuration (file and flags), report the first error and exit (0 ok, 2 error)");
  sub->add_option("--listen", o->listen, "host:port of the HTTP server (default 127.0.0.1:9797)");
  sub->add_option("--store", o->store, "Rolling store file (default /var/lib/reveal/agent.db; continued across restarts, else the old one becomes <path>.prev)");
  sub->add_option("--store-max-size", o->store_max_size,
                  "Keep the store's sample data below this size, e.g. 256MiB, 1GiB, 500MB (at least 1MiB; [store] max_size)");
  sub->add_option("--store-max-age", o->store_max_age, "Drop samples older than this, e.g. 24h, 90m ([store] max_age)");
  sub->add_option("--interval", o->interval, "Sampling interval, e.g. 1s, 500ms");
  sub->add_option("--root", o->root, "Read /proc and /sys under this directory (e.g. /host)");
  sub->add_option("--probes", o->probes, "Only these probes (names, or prefixes ending in *)")->delimiter(',');
  sub->add_option("--exclude", o->exclude, "Skip these probes")->delimiter(',');
  sub->add_option("--sampling-priority", o->priority,
                  "realtime (default) or normal: the sampling thread's scheduling (sampling_priority)")
      ->check(CLI::IsMember({"realtime", "normal"}));
  sub->add_option("--replay", o->replay, "Serve this recording in real time, as if live, instead of sampling the host");
  sub->add_flag("--exit-after-replay", o->exit_after_replay, "With --replay: exit once the last sample is served");
  sub->add_flag("-q,--quiet", o->quiet, "Print nothing but errors");
  return [o, sub]() -> int {
    // Signals are handled by the agent's signal thread; block them now so that a SIGTERM that
    // arrives while the configuration loads is handled (exit 0), not fatal.
    sigset_t sigs;
    sigemptyset(&sigs);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&sigs, sig);
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
    const std::pair<const char*, const std::string*> valued[] = {
        {"--config", &o->config},     {"--listen", &o->listen},
        {"--store", &o->store},       {"--store-max-size", &o->store_max_size},
        {"--store-max-age", &o->store_max_age}, {"--interval", &o->interval},
        {"--root", &o->root},         {"--replay", &o->replay}};
    for (const auto& [flag, value] : valued)
      if (sub->count(flag) > 0 && value->empty()) throw UsageError(std::string(flag) + ": empty value");
    // The configuration: defaults, then the file, then flags (flags win, also after SIGHUP).
    auto load = [o]() {
      AgentConfig c = o->config.empty() ? AgentConfig{} : load_agent_config(o->config);
      if (!o->listen.empty()) {
        if (!parse_listen(o->listen)) throw ConfigError("--listen '" + o->listen + "' is not host:port");
        c.listen = o->listen;
      }
      if (!o->store.empty()) c.store_path = o->store;
      if (!o->store_max_size.empty()) c.store_max_bytes = parse_size_arg("--store-max-size", o->store_max_size, 1ull << 20);
      if (!o->store_max_age.empty()) c.store_max_age = std::chrono::nanoseconds(parse_duration_arg("--store-max-age", o->store_max_age, 1));
      if (!o->interval.empty()) {
        auto d = parse_duration(o->interval);
        if (!d || d->count() < 1'000'000) throw ConfigError("--interval '" + o->interval + "' is not a duration of at least 1ms");
        c.interval = *d;
      }
      if (!o->root.empty()) c.root = o->root;
      if (!o->probes.empty()) c.probes = o->probes;
      if (!o->exclude.empty()) c.exclude = o->exclude;
      if (!o->priority.empty()) c.realtime_sampling = o->priority == "realtime";
      return c;
    };
    AgentConfig cfg;
    try {
      cfg = load();
      agent::check_detector_options(cfg);
    } catch (const std::exception& e) {
      throw UsageError(e.what());
    }
    if (o->exit_after_replay && o->replay.empty()) throw UsageError("--exit-after-replay needs --replay");
    if (o->replay.empty()) select_probes(cfg.probes, cfg.exclude);  // unknown probe names are usage errors
    if (!o->replay.empty()) {
      std::error_code ec;
      if (std::filesystem::equivalent(o->replay, cfg.store_path, ec))
        throw UsageError("--replay and the store are the same file '" + o->replay + "'");
    }
    if (o->check_config) {
      if (!o->quiet) std::printf("%s: ok\n", o->config.empty() ? "(defaults and flags)" : o->config.c_str());
      return kExitOk;
    }
    if (o->replay.empty()) check_root(cfg.root);
    agent::RunOptions run;
    run.config = cfg;
    if (!o->config.empty()) run.reload = load;
    run.replay = o->replay;
    run.exit_after_replay = o->exit_after_replay;
    run.quiet = o->quiet;
    return agent::run(run);
  };
}

}  // namespace reveal::cli
#endif
