// reveal: anomaly detection for ML infrastructure from hardware telemetry.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>

#include "commands.h"

namespace reveal::cli {
void error(const std::string& msg) { std::fprintf(stderr, "reveal: error: %s\n", msg.c_str()); }
void write_stdout(const std::string& text) {
  errno = 0;
  const bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0;
  if (!ok) throw std::runtime_error(std::string("cannot write to standard output: ") + std::strerror(errno ? errno : EIO));
}
void check_root(const std::string& root) {
  std::error_code ec;
  if (root.empty() || !std::filesystem::is_directory(root, ec))
    throw std::runtime_error("--root '" + root + "' is not a directory");
}
std::vector<std::unique_ptr<Probe>> select_probes(const std::vector<std::string>& include,
                                                  const std::vector<std::string>& exclude) {
  try {
    return make_probes(include, exclude);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}
}  // namespace reveal::cli

int main(int argc, char** argv) {
  using namespace reveal::cli;
  CLI::App app{"reveal: finds anomalies in ML infrastructure from hardware telemetry alone"};
  app.require_subcommand(1);
  std::map<CLI::App*, Action> actions;
  for (auto add : {add_probes, add_record, add_detect, add_report, add_train, add_config, add_info, add_export, add_import,
#ifdef REVEAL_WITH_HTTP
                   add_agent,
#endif
                   add_docs}) {
    const std::size_t before = app.get_subcommands({}).size();
    Action a = add(app);
    actions[app.get_subcommands({}).at(before)] = std::move(a);
  }
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (auto* sub : app.get_subcommands({})) known = known || sub->get_name() == argv[1];
    if (!known) {
      std::string names;
      for (auto* sub : app.get_subcommands({}))
        if (!sub->get_group().empty()) names += (names.empty() ? "" : ", ") + sub->get_name();
      error(std::string("unknown command '") + argv[1] + "' (commands: " + names + "; see --help)");
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    error(e.what());
    return kExitUsage;
  }
  for (auto& [sub, action] : actions) {
    if (!sub->parsed()) continue;
    try {
      return action();
    } catch (const CLI::Error& e) {
      error(e.what());
      return kExitUsage;
    } catch (const UsageError& e) {
      error(e.what());
      return kExitUsage;
    } catch (const std::exception& e) {
      error(e.what());
      return kExitInput;
    }
  }
  return kExitUsage;
}
