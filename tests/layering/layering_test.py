#!/usr/bin/env python3
"""Layers point one way: a file may include headers of its own layer or of a lower one, never of
a higher one. Scans every .h/.cpp under src/ and include/reveal/ for `#include "..."`.

Layers, lowest first (docs/DESIGN.md's data path):
  0 util        src/util                    units, glob, version, binary_io, matrix, progress
  1 telemetry   src/telemetry               probes, sampler, channels, the Recording
  2 store       src/store                   the store and the importers
  3 features    src/features                rates, derived channels, windows
  4 detectors   src/detectors               robust z, SPOT, PCA residual, Isolation Forest
  5 explain     src/explain                 incidents, attribution, actions
  6 pipeline    src/pipeline                detect(), training, streaming, absence, peers
  7 report      src/report                  text, JSON, HTML renderers
  8 net         src/agent, src/fleet        the agent and the Prometheus reader (one layer)
  9 cli         src/cli                     the `reveal` command

A source file's layer is its folder under src/. A public header's layer is in PUBLIC_HEADERS below: a
new header in include/reveal/ must be added there (the test fails otherwise). An include
"folder/..." takes that folder's layer; a bare "name.h" is beside the including file.

Exceptions are listed in ALLOWED with a reason; an entry that no longer matches an include fails
the test too, so the list shrinks as the code is fixed.

usage: layering_test.py [REPO_ROOT]   (exit 0 clean, 1 on a violation)
"""
import pathlib
import re
import sys

LAYERS = ["util", "telemetry", "store", "features", "detectors", "explain", "pipeline", "report", "net", "cli"]

FOLDERS = {
    "util": "util", "telemetry": "telemetry", "store": "store", "features": "features",
    "detectors": "detectors", "explain": "explain", "pipeline": "pipeline",
    "report": "report", "agent": "net", "fleet": "net", "cli": "cli",
}

PUBLIC_HEADERS = {
    # util
    "units.h": "util", "glob.h": "util", "version.h": "util", "binary_io.h": "util",
    "matrix.h": "util", "progress.h": "util",
    # telemetry
    "channel.h": "telemetry", "recording.h": "telemetry", "probe.h": "telemetry",
    "registry.h": "telemetry", "sampler.h": "telemetry", "host_info.h": "telemetry",
    "host_config.h": "telemetry", "gpu_pods.h": "telemetry",
    # store
    "store.h": "store", "store_reader.h": "store", "recording_feed.h": "store", "ingest.h": "store", "recorder.h": "store",
    # features
    "features.h": "features",
    # detectors
    "robust_z.h": "detectors", "spot.h": "detectors", "pca_residual.h": "detectors",
    "isolation_forest.h": "detectors",
    # explain
    "incident.h": "explain", "tenants.h": "explain", "config_drift.h": "explain",
    # pipeline
    "offline.h": "pipeline", "baseline_model.h": "pipeline", "streaming.h": "pipeline",
    "absence.h": "pipeline", "absence_tracker.h": "pipeline", "peers.h": "pipeline",
    # report
    "report.h": "report", "html_report.h": "report", "peers_report.h": "report",
    # net
    "agent.h": "net", "agent_config.h": "net", "prometheus_source.h": "net",
}

# (including file, included header) -> why it is allowed for now.
ALLOWED = {
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of_file(rel: pathlib.PurePosixPath):
    if rel.parts[0] == "include":
        return PUBLIC_HEADERS.get(rel.name)
    return FOLDERS.get(rel.parts[1]) if len(rel.parts) > 2 else None


def layer_of_include(inc: str, includer_layer: str):
    if inc.startswith("reveal/"):
        return PUBLIC_HEADERS.get(inc[len("reveal/"):])
    first = inc.split("/")[0]
    if "/" in inc and first in FOLDERS:
        return FOLDERS[first]
    return includer_layer  # beside the including file


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    files = sorted(p for d in ("src", "include/reveal") for p in (root / d).rglob("*")
                   if p.suffix in (".h", ".cpp"))
    if not files:
        print(f"layering: no sources under {root}")
        return 1
    errors, used = [], set()
    for path in files:
        rel = pathlib.PurePosixPath(path.relative_to(root).as_posix())
        mine = layer_of_file(rel)
        if mine is None:
            errors.append(f"{rel}: no layer (add its folder to FOLDERS or the header to PUBLIC_HEADERS)")
            continue
        for inc in INCLUDE.findall(path.read_text(errors="replace")):
            theirs = layer_of_include(inc, mine)
            if theirs is None:
                errors.append(f"{rel}: includes \"{inc}\", a public header with no layer (add it to PUBLIC_HEADERS)")
            elif LAYERS.index(theirs) > LAYERS.index(mine):
                key = (str(rel), inc)
                if key in ALLOWED:
                    used.add(key)
                else:
                    errors.append(f"{rel} ({mine}) includes \"{inc}\" ({theirs}): a lower layer may not "
                                  f"include a higher one")
    for key in sorted(set(ALLOWED) - used):
        errors.append(f"allow-list entry {key} no longer matches a violating include: remove it")
    for e in errors:
        print("layering:", e)
    print(f"layering: {len(files)} files, {len(errors)} problem(s), {len(used)} allowed exception(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
