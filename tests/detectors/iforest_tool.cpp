// reveal_iforest_tool: drives reveal::IsolationForest on a matrix from a file, so that other
// programs (scikit-learn in tests/detectors/iforest_sklearn_test.sh, the speed comparison in
// bench/pipeline/iforest_vs_sklearn.sh) can fit and score the very same numbers.
//
//   reveal_iforest_tool fit-score IN.csv OUT.txt [--trees N] [--psi P] [--seed S] [--query Q.csv] [--many]
//       fits on every row of IN.csv and writes the score of each row of Q.csv (default: of
//       IN.csv), one per line (%.17g); row by row with score(), or with --many in one
//       score_many() call (the two are bit-identical).
//   reveal_iforest_tool c N...
//       prints the normaliser c(N) = average_path_length(N), one per line (%.17g).
//   reveal_iforest_tool time IN.csv [--trees N] [--psi P] [--seed S] [--reps R] [--per-row]
//       R times (default 5): fit on every row, then score every row with score_many() (as
//       `reveal detect` does; --per-row: one score() call per row, the agent's path); prints one
//       line per repetition "fit_s score_s total_s" (wall seconds, steady clock) and a checksum
//       line naming the scoring path.
//
// IN.csv: one row per line, values separated by commas; empty lines and lines starting with
// '#' are skipped; every row must have the same number of values ("nan" is read as NaN).
// Defaults: 100 trees, ψ = 256, seed 42 (the values `reveal detect` uses).
// Exit status: 0 on success, 2 on a usage error, 1 on an unreadable or malformed input.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "reveal/isolation_forest.h"
#include "reveal/matrix.h"

namespace {

reveal::Matrix read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  reveal::Matrix m;
  std::vector<double> row;
  std::string line;
  std::size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    row.clear();
    const char* p = line.c_str();
    for (;;) {
      char* end = nullptr;
      const double v = std::strtod(p, &end);
      if (end == p) throw std::runtime_error(path + ":" + std::to_string(lineno) + ": not a number");
      row.push_back(v);
      p = end;
      while (*p == ' ' || *p == '\r') ++p;
      if (*p == '\0') break;
      if (*p != ',') throw std::runtime_error(path + ":" + std::to_string(lineno) + ": expected ','");
      ++p;
    }
    if (m.rows() > 0 && row.size() != m.cols())
      throw std::runtime_error(path + ":" + std::to_string(lineno) + ": " + std::to_string(row.size()) +
                               " values, earlier rows have " + std::to_string(m.cols()));
    m.append_row(row);
  }
  if (m.rows() == 0) throw std::runtime_error(path + ": no rows");
  return m;
}

struct Args {
  reveal::IsolationForestOptions forest;
  int reps = 5;
  bool many = false, per_row = false;
  std::string query;
  std::vector<std::string> positional;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 2; i < argc; ++i) {
    const std::string s = argv[i];
    auto next = [&]() -> long long {
      if (i + 1 >= argc) throw std::invalid_argument(s + " needs a value");
      char* end = nullptr;
      const long long v = std::strtoll(argv[++i], &end, 10);
      if (*end != '\0' || v < 0) throw std::invalid_argument(s + ": not a non-negative integer");
      return v;
    };
    if (s == "--trees") a.forest.n_trees = int(next());
    else if (s == "--psi") a.forest.max_samples = int(next());
    else if (s == "--seed") a.forest.seed = std::uint64_t(next());
    else if (s == "--reps") a.reps = int(next());
    else if (s == "--many") a.many = true;
    else if (s == "--per-row") a.per_row = true;
    else if (s == "--query") {
      if (i + 1 >= argc) throw std::invalid_argument(s + " needs a value");
      a.query = argv[++i];
    }
    else if (s.rfind("--", 0) == 0) throw std::invalid_argument("unknown option " + s);
    else a.positional.push_back(s);
  }
  return a;
}

int usage() {
  std::fprintf(stderr,
               "usage: reveal_iforest_tool fit-score IN.csv OUT.txt [--trees N] [--psi P] [--seed S] [--query Q.csv] [--many]\n"
               "       reveal_iforest_tool c N...\n"
               "       reveal_iforest_tool time IN.csv [--trees N] [--psi P] [--seed S] [--reps R] [--per-row]\n");
  return 2;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string cmd = argv[1];
  Args a;
  try {
    a = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reveal_iforest_tool: %s\n", e.what());
    return usage();
  }
  try {
    if (cmd == "c") {
      if (a.positional.empty()) return usage();
      for (const auto& n : a.positional) std::printf("%.17g\n", reveal::average_path_length(std::strtod(n.c_str(), nullptr)));
      return 0;
    }
    if (cmd == "fit-score") {
      if (a.positional.size() != 2) return usage();
      const reveal::Matrix X = read_csv(a.positional[0]);
      reveal::IsolationForest f(a.forest);
      f.fit(X);
      const reveal::Matrix Q = a.query.empty() ? X : read_csv(a.query);
      if (Q.cols() != X.cols()) throw std::runtime_error(a.query + ": column count differs from " + a.positional[0]);
      std::FILE* out = std::fopen(a.positional[1].c_str(), "w");
      if (!out) throw std::runtime_error("cannot write " + a.positional[1]);
      std::vector<double> scores(Q.rows());
      if (a.many) f.score_many(Q, scores);
      else for (std::size_t i = 0; i < Q.rows(); ++i) scores[i] = f.score(Q.row(i));
      for (double s : scores) std::fprintf(out, "%.17g\n", s);
      if (std::fclose(out) != 0) throw std::runtime_error("cannot write " + a.positional[1]);
      return 0;
    }
    if (cmd == "time") {
      if (a.positional.size() != 1 || a.reps <= 0) return usage();
      const reveal::Matrix X = read_csv(a.positional[0]);
      std::vector<double> scores(X.rows());
      double checksum = 0;
      for (int r = 0; r < a.reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        reveal::IsolationForest f(a.forest);
        f.fit(X);
        const double fit_s = seconds_since(t0);
        const auto t1 = std::chrono::steady_clock::now();
        if (a.per_row)
          for (std::size_t i = 0; i < X.rows(); ++i) scores[i] = f.score(X.row(i));
        else
          f.score_many(X, scores);
        const double score_s = seconds_since(t1);
        std::printf("%.6f %.6f %.6f\n", fit_s, score_s, fit_s + score_s);
        for (double s : scores) checksum += s;
      }
      std::printf("# %zu rows x %zu cols, %s, checksum %.6f\n", X.rows(), X.cols(),
                  a.per_row ? "score() per row" : "score_many()", checksum);
      return 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reveal_iforest_tool: %s\n", e.what());
    return 1;
  }
  return usage();
}
