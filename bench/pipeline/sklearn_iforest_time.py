#!/usr/bin/python3
# scikit-learn's side of bench/pipeline/iforest_vs_sklearn.sh: times
# IsolationForest(n_estimators=100, max_samples=256, n_jobs=1).fit(X) and score_samples(X) on
# a CSV matrix (as written by reveal_window_features), REPS times in one process.
#   /usr/bin/python3 sklearn_iforest_time.py IN.csv [REPS] [SEED]
# Prints one line per repetition, "fit_s score_s total_s" (wall seconds, time.perf_counter),
# then "# R rows x C cols, N NaN imputed, checksum S". sklearn rejects NaN, so gaps are replaced
# by the column's median (reveal::IsolationForest does the same internally) before timing.
# The forest is rebuilt each repetition with random_state = SEED + repetition.
import sys
import time
import warnings

import numpy as np
from sklearn.ensemble import IsolationForest


def main():
    warnings.filterwarnings("ignore", message="max_samples")  # ψ > rows: both use ψ = rows
    X = np.loadtxt(sys.argv[1], delimiter=",", ndmin=2)
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 42
    nan = np.isnan(X)
    if nan.any():
        med = np.nanmedian(X, axis=0)
        med[np.isnan(med)] = 0.0
        X = np.where(nan, med, X)
    checksum = 0.0
    for r in range(reps):
        t0 = time.perf_counter()
        f = IsolationForest(n_estimators=100, max_samples=256, n_jobs=1, random_state=seed + r)
        f.fit(X)
        t1 = time.perf_counter()
        s = f.score_samples(X)
        t2 = time.perf_counter()
        print(f"{t1 - t0:.6f} {t2 - t1:.6f} {t2 - t0:.6f}")
        checksum += float(-s.sum())
    print(f"# {X.shape[0]} rows x {X.shape[1]} cols, {int(nan.sum())} NaN imputed, checksum {checksum:.6f}")


if __name__ == "__main__":
    main()
