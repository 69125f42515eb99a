#include "docs_gen.h"

#include <algorithm>
#include <set>

namespace reveal::cli {
namespace {

bool visible(const CLI::App* a) { return !a->get_group().empty(); }

void collect(const CLI::App* at, const std::string& prefix, std::vector<CommandNode>& out) {
  for (const CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; })) {
    if (!visible(sub)) continue;
    const std::string path = prefix.empty() ? sub->get_name() : prefix + " " + sub->get_name();
    out.push_back({path, sub});
    collect(sub, path, out);
  }
}

bool is_help(const CLI::App* app, const CLI::Option* o) { return o == app->get_help_ptr() || o == app->get_help_all_ptr(); }
bool is_flag(const CLI::Option* o) { return o->get_items_expected_max() == 0; }

// The options --help lists (visible ones), help flags first excluded.
std::vector<const CLI::Option*> options_of(const CLI::App* app, bool positional) {
  std::vector<const CLI::Option*> v;
  for (const CLI::Option* o : app->get_options())
    if (!o->get_group().empty() && !is_help(app, o) && o->nonpositional() != positional) v.push_back(o);
  return v;
}

// Every spelling of an option: "-o", "--output", "--csv".
std::vector<std::string> spellings(const CLI::Option* o) {
  std::vector<std::string> s;
  for (const auto& n : o->get_snames()) s.push_back("-" + n);
  for (const auto& n : o->get_lnames()) s.push_back("--" + n);
  return s;
}

// "TEXT", "UINT", "{report|fuse|off}".
std::string placeholder(const CLI::Option& o) {
  const auto choices = option_choices(o);
  if (!choices.empty()) {
    std::string s = "{";
    for (const auto& c : choices) s += (s.size() > 1 ? "|" : "") + c;
    return s + "}";
  }
  const std::string t = o.get_type_name();
  const std::string base = t.substr(0, t.find(':'));
  return base.empty() ? "VALUE" : base;
}

// Positional arguments that name stores or model files (completion offers *.db and *.model).
bool names_stores(const CLI::Option* o) {
  std::string d = o->get_description();
  std::transform(d.begin(), d.end(), d.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return d.find("store") != std::string::npos || d.find("model") != std::string::npos;
}

// --- troff -----------------------------------------------------------------------------------

// Text for troff: backslashes and minus signs escaped, a leading '.' or '\'' made literal.
std::string roff(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '\\') o += "\\e";
    else if (c == '-') o += "\\-";
    else o += c;
  }
  if (!o.empty() && (o[0] == '.' || o[0] == '\'')) o.insert(0, "\\&");
  return o;
}

std::string usage(const std::string& path, const CLI::App* app) {
  std::string u = "\\fBreveal " + roff(path) + "\\fR";
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; }))
    if (visible(sub) && app->get_require_subcommand_min() > 0) return u + " \\fICOMMAND\\fR ...";
  if (!options_of(app, false).empty()) u += " [\\fIOPTIONS\\fR]";
  for (const CLI::Option* p : options_of(app, true)) {
    const bool many = p->get_items_expected_max() > 1;
    const std::string n = "\\fI" + roff(p->get_name(true)) + "\\fR" + (many ? " ..." : "");
    u += p->get_required() ? " " + n : " [" + n + "]";
  }
  return u;
}

std::string option_entry(const CLI::Option* o) {
  std::string names;
  for (const auto& s : spellings(o)) names += (names.empty() ? "" : ", ") + ("\\fB" + roff(s) + "\\fR");
  if (!is_flag(o)) names += " \\fI" + roff(placeholder(*o)) + "\\fR";
  std::string text = o->get_description();
  if (!o->get_default_str().empty()) text += " (default: " + o->get_default_str() + ")";
  if (o->get_required()) text += " (required)";
  return ".TP\n" + names + "\n" + roff(text) + "\n";
}

}  // namespace

std::vector<CommandNode> visible_commands(const CLI::App& root) {
  std::vector<CommandNode> out;
  collect(&root, "", out);
  return out;
}

std::vector<std::string> footer_section(const std::string& footer, const std::string& title) {
  std::vector<std::string> lines;
  bool in = false;
  std::size_t p = 0;
  while (p <= footer.size()) {
    const std::size_t e = std::min(footer.find('\n', p), footer.size());
    const std::string line = footer.substr(p, e - p);
    p = e + 1;
    if (line == title + ":") {
      in = true;
    } else if (in) {
      if (!line.starts_with("  ")) break;
      lines.push_back(line.substr(2));
    }
  }
  return lines;
}

std::vector<std::string> option_choices(const CLI::Option& opt) {
  const std::string t = opt.get_type_name();
  const auto a = t.find(":{"), b = t.find('}', a == std::string::npos ? 0 : a);
  if (a == std::string::npos || b == std::string::npos) return {};
  std::vector<std::string> v;
  const std::string inner = t.substr(a + 2, b - a - 2);
  std::size_t p = 0;
  while (p <= inner.size()) {
    const std::size_t e = std::min(inner.find(',', p), inner.size());
    if (e > p) v.push_back(inner.substr(p, e - p));
    p = e + 1;
  }
  return v;
}

std::string man_page(const CLI::App& root, const std::string& version) {
  std::string desc = root.get_description();
  if (desc.starts_with("reveal: ")) desc = desc.substr(8);
  const auto nodes = visible_commands(root);
  std::string o = ".\\\" Generated by `reveal docs man` from the CLI definition; do not edit by hand.\n";
  o += ".TH REVEAL 1 \"\" \"reveal " + roff(version) + "\" \"User Commands\"\n";
  o += ".SH NAME\nreveal \\- " + roff(desc) + "\n";
  o += ".SH SYNOPSIS\n";
  for (const auto& n : nodes)
    if (n.app->get_require_subcommand_min() == 0) o += usage(n.path, n.app) + "\n.br\n";
  o += ".SH DESCRIPTION\n" + roff("Reveal " + desc + ".") + "\n.PP\n" +
       roff("Each command prints its options, examples and exit status with --help (reveal COMMAND --help); "
            "this page collects them.") + "\n";
  o += ".SH OPTIONS\n.TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nPrint the commands and exit (also after any command)\n";
  for (const CLI::Option* opt : options_of(&root, false)) o += option_entry(opt);
  o += ".SH COMMANDS\n";
  for (const auto& n : nodes) {
    o += ".SS \"" + roff("reveal " + n.path) + "\"\n" + usage(n.path, n.app) + "\n.PP\n" +
         roff(n.app->get_description()) + "\n";
    for (const CLI::Option* p : options_of(n.app, true))
      o += ".TP\n\\fI" + roff(p->get_name(true)) + "\\fR\n" + roff(p->get_description()) + "\n";
    for (const CLI::Option* opt : options_of(n.app, false)) o += option_entry(opt);
    const auto status = footer_section(n.app->get_footer(), "Exit status");
    std::vector<std::string> own;  // the command's own exit codes, besides the shared 0/2/3
    for (const auto& l : status)
      if (!l.starts_with("0  success") && !l.starts_with("2  ") && !l.starts_with("3  ")) own.push_back(l);
    if (!own.empty()) {
      o += ".PP\nExit status, besides 0 (success), 2 (usage error) and 3 (input error):\n";
      for (const auto& l : own) o += ".br\n" + roff(l) + "\n";
    }
  }
  o += ".SH EXAMPLES\n";
  std::set<std::string> seen;
  for (const auto& n : nodes)
    for (const auto& e : footer_section(n.app->get_footer(), "Examples"))
      if (!e.ends_with("--help") && seen.insert(e).second) o += ".PP\n.nf\n" + roff(e) + "\n.fi\n";
  o += ".SH \"EXIT STATUS\"\n";
  for (const auto& l : footer_section(root.get_footer(), "Exit status")) {
    const auto sp = l.find("  ");
    o += ".TP\n.B " + roff(l.substr(0, sp)) + "\n" + roff(sp == std::string::npos ? "" : l.substr(sp + 2)) + "\n";
  }
  o += ".SH \"SEE ALSO\"\n" +
       roff("README.md; docs/DETECT_JSON.md (detect --json), docs/BASELINE.md (model files), docs/AGENT.md and "
            "docs/FLEET.md (the agent, Prometheus), docs/METRICS.md (every channel).") + "\n";
  return o;
}

namespace {

// Bash single-quoted word list.
std::string quoted(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The case arm of one command path ("" for reveal itself): its subcommands, flags and how to
// complete its positional arguments and option values.
std::string completion_arm(const std::string& path, const CLI::App* app) {
  std::vector<std::string> subs, flags, files, any, choices;
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; }))
    if (visible(sub)) subs.push_back(sub->get_name());
  for (const CLI::Option* o : app->get_options()) {
    if (o->get_group().empty() || !o->nonpositional()) continue;
    for (const auto& s : spellings(o)) flags.push_back(s);
  }
  std::string pos = "files";
  for (const CLI::Option* p : options_of(app, true)) {
    if (p->get_name(true) == "command") pos = "command";
    else if (names_stores(p)) pos = "stores";
  }
  std::string o = "    '" + path + "')\n";
  o += "      subs=" + quoted(subs) + "\n      flags=" + quoted(flags) + "\n      positional=" + pos + "\n";
  std::string values;
  for (const CLI::Option* opt : options_of(app, false)) {
    if (is_flag(opt)) continue;
    std::string pattern;
    for (const auto& s : spellings(opt)) pattern += (pattern.empty() ? "" : "|") + s;
    const auto ch = option_choices(*opt);
    if (!ch.empty())
      values += "        " + pattern + ") COMPREPLY=($(compgen -W " + quoted(ch) + " -- \"$cur\")); return ;;\n";
    else
      values += "        " + pattern + ") COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n";
  }
  if (!values.empty()) o += "      case $prev in\n" + values + "      esac\n";
  return o + "      ;;\n";
}

}  // namespace

std::string bash_completion(const CLI::App& root) {
  const auto nodes = visible_commands(root);
  std::string transitions;
  for (const auto& n : nodes) transitions += (transitions.empty() ? "" : "|") + std::string("'") + n.path + "'";
  std::string o =
      "# bash completion for reveal. Generated by `reveal docs completion bash` from the CLI definition;\n"
      "# do not edit by hand. Install: source it from ~/.bashrc, or copy it to\n"
      "# /usr/share/bash-completion/completions/reveal.\n"
      "_reveal() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev='' path='' i w next\n"
      "  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
      "  COMPREPLY=()\n"
      "  # The command path: the subcommand words before the cursor (\"import csv\").\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    w=${COMP_WORDS[i]}\n"
      "    if [[ $w == -- ]]; then  # record ... -- CMD: complete the command, then its files\n"
      "      if ((i == COMP_CWORD - 1)); then COMPREPLY=($(compgen -c -- \"$cur\")); else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n"
      "      return\n"
      "    fi\n"
      "    next=${path:+$path }$w\n"
      "    case $next in\n"
      "      " + transitions + ") path=$next ;;\n"
      "    esac\n"
      "  done\n"
      "  local subs='' flags='' positional=files\n"
      "  case $path in\n";
  o += completion_arm("", &root);
  for (const auto& n : nodes) o += completion_arm(n.path, n.app);
  o += "  esac\n"
       "  if [[ $cur == -* ]]; then\n"
       "    COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n"
       "  elif [[ -n $subs ]]; then\n"
       "    COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n"
       "  elif [[ $positional == stores ]]; then\n"
       "    COMPREPLY=($(compgen -f -X '!*.db' -- \"$cur\") $(compgen -f -X '!*.model' -- \"$cur\") $(compgen -d -- \"$cur\"))\n"
       "  elif [[ $positional == command ]]; then\n"
       "    COMPREPLY=($(compgen -c -- \"$cur\"))\n"
       "  else\n"
       "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
       "  fi\n"
       "}\n"
       "complete -F _reveal reveal\n";
  return o;
}

}  // namespace reveal::cli
