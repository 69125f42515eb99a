#!/usr/bin/python3
"""Writes Reveal's Grafana dashboards (deploy/grafana/*.json) from the panel lists below.

  deploy/grafana/dashboards.py            rewrite the JSON files next to this script
  deploy/grafana/dashboards.py --check    exit 1 if a JSON file differs from what this writes
  deploy/grafana/dashboards.py --exprs    print every PromQL expression, one JSON object a line
                                          ({"dashboard", "panel", "expr"}), for the fleet test

Three dashboards, linked to each other by their "reveal" tag:
  reveal-fleet.json      fleet overview: hosts by anomaly score, open incidents by subsystem,
                         incidents and workload changes over time, the agents' own cost
  reveal-host.json       one host ($instance): fused and per-subsystem scores, its incidents, and
                         the raw signals behind each subsystem (CPU, pressure, memory, network,
                         disk, GPU through NVML, containers)
  reveal-incidents.json  incident timeline: when each host had an incident open, by subsystem,
                         with the channel that led it; absences of a source; annotations at each
                         incident opened
Metric names: docs/AGENT.md ("/metrics") and docs/METRICS.md (raw channels are
reveal_<source>_<field>[_total]{channel,subsystem,unit[,entity]}). Edit the lists here, run the
script, commit both; tests/cli/deploy_test.sh fails when they disagree, and
tests/cli/fleet_prometheus_test.sh runs every expression against a real Prometheus.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DS = {"type": "prometheus", "uid": "${datasource}"}
# Per-link NVLink families (nvml:nvlink_<x>_l<link>.gpuN channels) and the IB error counters.
NVLINK_RX = "reveal_nvml_nvlink_rx_bytes_l[0-9]+_total"
NVLINK_TX = "reveal_nvml_nvlink_tx_bytes_l[0-9]+_total"
NVLINK_ERRORS = "reveal_nvml_nvlink_(replay|recovery|crc_flit|crc_data)_error_count_l[0-9]+_total"
IB_ERRORS = "reveal_rdma_(port_rcv_errors|symbol_error|port_xmit_discards|link_downed)_total"
SUBSYSTEM_COLOURS = {"cpu": "blue", "memory": "purple", "network": "orange", "storage": "yellow", "gpu": "green",
                     "interconnect": "dark-green", "power/thermal": "red", "system": "text"}


def var_datasource():
    return {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
            "current": {}, "hide": 0}


def var_query(name, label, query, multi=False):
    # The query as a string: every Grafana since 7 reads it (10+ migrates it to its editor's form).
    return {"name": name, "label": label, "type": "query", "datasource": DS, "definition": query,
            "query": query, "refresh": 2, "sort": 1, "current": {}, "hide": 0,
            "includeAll": multi, "multi": multi, **({"allValue": ".+"} if multi else {})}


class Board:
    """Panels laid out left to right in rows of 24 grid units."""

    def __init__(self, uid, title, description, variables, annotations=()):
        self.uid, self.title, self.description = uid, title, description
        self.variables, self.annotations = variables, list(annotations)
        self.panels, self.x, self.y, self.row_h = [], 0, 0, 0

    def row(self, title):
        self.newline()
        self.panels.append({"type": "row", "title": title, "collapsed": False, "panels": [],
                            "gridPos": {"h": 1, "w": 24, "x": 0, "y": self.y}, "id": len(self.panels) + 1})
        self.y += 1

    def newline(self):
        self.y += self.row_h
        self.x, self.row_h = 0, 0

    def add(self, kind, title, description, targets, w=12, h=8, unit=None, options=None, field=None,
            overrides=None, transformations=None):
        if self.x + w > 24:
            self.newline()
        defaults = {"unit": unit} if unit else {}
        defaults.update(field or {})
        panel = {"id": len(self.panels) + 1, "type": kind, "title": title, "description": description,
                 "datasource": DS, "gridPos": {"h": h, "w": w, "x": self.x, "y": self.y},
                 "targets": [dict(t, refId=chr(ord("A") + i), datasource=DS) for i, t in enumerate(targets)],
                 "fieldConfig": {"defaults": defaults, "overrides": overrides or []}, "options": options or {}}
        if transformations:
            panel["transformations"] = transformations
        self.panels.append(panel)
        self.x += w
        self.row_h = max(self.row_h, h)

    def json(self):
        return {
            "uid": self.uid, "title": self.title, "description": self.description, "tags": ["reveal"],
            "editable": True, "graphTooltip": 1, "schemaVersion": 39, "version": 1, "refresh": "30s",
            "time": {"from": "now-6h", "to": "now"}, "timezone": "",
            "links": [{"type": "dashboards", "tags": ["reveal"], "asDropdown": False, "includeVars": True,
                       "keepTime": True, "title": "Reveal"}],
            "templating": {"list": self.variables},
            "annotations": {"list": [{"builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"},
                                      "enable": True, "hide": True, "iconColor": "rgba(0, 211, 255, 1)",
                                      "name": "Annotations & Alerts", "type": "dashboard"}] + self.annotations},
            "panels": self.panels,
        }


def ts(expr, legend="", instant=False, fmt=None):
    t = {"expr": expr, "legendFormat": legend, "range": not instant, "instant": instant}
    if fmt:
        t["format"] = fmt
    return t


THRESHOLD_1 = {"thresholds": {"mode": "absolute", "steps": [{"color": "green", "value": None},
                                                            {"color": "red", "value": 1}]},
               "custom": {"thresholdsStyle": {"mode": "line"}}}
SUBSYSTEM_OVERRIDES = [{"matcher": {"id": "byName", "options": s},
                        "properties": [{"id": "color", "value": {"mode": "fixed", "fixedColor": c}}]}
                       for s, c in SUBSYSTEM_COLOURS.items()]
STACKED_BARS = {"custom": {"drawStyle": "bars", "fillOpacity": 60, "stacking": {"mode": "normal"}}}
JOB_VAR = var_query("job", "Job", "label_values(reveal_build_info, job)")
TABLE_LABELS = {"id": "organize", "options": {"excludeByName": {"Time": True, "Value": True, "__name__": True,
                                                                 "job": True}}}


def fleet():
    j = 'job="$job"'
    b = Board("reveal-fleet", "Reveal / Fleet overview",
              "Every host running reveal agent: which are anomalous now, open incidents by subsystem, "
              "incidents and workload changes over time, and what the agents cost.",
              [var_datasource(), JOB_VAR])
    b.row("Now")
    b.add("stat", "Agents up", "Scrape targets of the job answering (up == 1).",
          [ts(f"count(up{{{j}}} == 1) or vector(0)", instant=True)], w=4, h=4)
    b.add("stat", "Hosts with an open incident", "Hosts where reveal_incident_active is 1 for some subsystem.",
          [ts(f"count(max by (instance) (reveal_incident_active{{{j}}})) or vector(0)", instant=True)], w=4, h=4,
          field={"thresholds": {"mode": "absolute", "steps": [{"color": "green", "value": None},
                                                              {"color": "red", "value": 1}]}})
    b.add("stat", "Models ready", "Agents past warm-up with a fitted reference model (reveal_model_ready).",
          [ts(f"sum(reveal_model_ready{{{j}}})", instant=True)], w=4, h=4)
    b.add("stat", "Incidents opened", "Incidents opened on all hosts over the dashboard's time range.",
          [ts(f"sum(increase(reveal_incidents_total{{{j}}}[$__range]))", instant=True)], w=4, h=4, unit="none",
          field={"decimals": 0})
    b.add("stat", "Workload changes", "Anomalous stretches in which no symptom rose (a job started, stopped or "
          "changed phase) over the time range: events, not incidents.",
          [ts(f"sum(increase(reveal_workload_changes_total{{{j}}}[$__range]))", instant=True)], w=4, h=4,
          unit="none", field={"decimals": 0})
    b.add("stat", "Samples skipped (1 h)", "Ticks the agents' samplers missed in the last hour: a saturated "
          "host or a throttled agent.",
          [ts(f"sum(increase(reveal_samples_skipped_total{{{j}}}[1h]))", instant=True)], w=4, h=4,
          field={"decimals": 0})
    b.row("Hosts")
    b.add("bargauge", "Hosts by anomaly score (max over 5 min)",
          "Fused anomaly score: 1 is the threshold of an anomalous window at the configured false-incident rate.",
          [ts(f"sort_desc(topk(25, max by (instance) (max_over_time(reveal_anomaly_score{{{j}}}[5m]))))",
              "{{instance}}", instant=True)], w=8, h=10,
          field={"min": 0, "thresholds": {"mode": "absolute", "steps": [{"color": "green", "value": None},
                                                                       {"color": "orange", "value": 0.7},
                                                                       {"color": "red", "value": 1}]}},
          options={"orientation": "horizontal", "displayMode": "gradient"})
    b.add("timeseries", "Anomaly score by host", "reveal_anomaly_score of every host; the red line is 1.",
          [ts(f"reveal_anomaly_score{{{j}}}", "{{instance}}")], w=16, h=10, field=THRESHOLD_1)
    b.row("Incidents")
    b.add("barchart", "Open incidents by subsystem", "Hosts with an incident open now, by the subsystem it names.",
          [ts(f"sum by (subsystem) (reveal_incident_active{{{j}}}) "
              f"or sum by (subsystem) (0 * reveal_incidents_total{{{j}}})", "{{subsystem}}", instant=True,
              fmt="table")], w=8, h=9, overrides=SUBSYSTEM_OVERRIDES)
    b.add("timeseries", "Incidents opened per 10 min, by subsystem", "increase(reveal_incidents_total[10m]).",
          [ts(f"sum by (subsystem) (increase(reveal_incidents_total{{{j}}}[10m]))", "{{subsystem}}")], w=8, h=9,
          overrides=SUBSYSTEM_OVERRIDES, field=STACKED_BARS)
    b.add("timeseries", "Workload changes, withdrawn incidents and transients per 10 min",
          "Workload changes (no symptom rose), incidents withdrawn as a new workload starting, and transients "
          "(symptoms over within detect.min_duration, never reported as incidents).",
          [ts(f"sum(increase(reveal_workload_changes_total{{{j}}}[10m]))", "workload changes"),
           ts(f"sum(increase(reveal_incidents_withdrawn_total{{{j}}}[10m]))", "incidents withdrawn"),
           ts(f"sum(increase(reveal_incidents_transient_total{{{j}}}[10m]))", "transients")], w=8, h=9)
    b.add("table", "Open incidents", "One row per host and subsystem with an incident open now; top_channel is "
          "the channel that led it. Details: the agent's /incidents.",
          [ts(f"reveal_incident_active{{{j}}}", instant=True, fmt="table")], w=24, h=7,
          transformations=[TABLE_LABELS])
    b.row("The agents")
    b.add("timeseries", "Agent CPU (cores)", "rate(process_cpu_seconds_total) of each agent.",
          [ts(f"rate(process_cpu_seconds_total{{{j}}}[5m])", "{{instance}}")], w=8, h=8, unit="none")
    b.add("timeseries", "Agent memory", "Resident set of each agent.",
          [ts(f"process_resident_memory_bytes{{{j}}}", "{{instance}}")], w=8, h=8, unit="bytes")
    b.add("timeseries", "Store size", "The rolling store on disk (bounded by store.max_size).",
          [ts(f"reveal_store_bytes{{{j}}}", "{{instance}}")], w=8, h=8, unit="bytes")
    return b


def host():
    h = 'job="$job", instance="$instance"'
    b = Board("reveal-host", "Reveal / Host",
              "One host: its anomaly scores, its incidents and the raw signals behind each subsystem.",
              [var_datasource(), JOB_VAR,
               var_query("instance", "Host", 'label_values(reveal_build_info{job="$job"}, instance)')])
    b.row("Detection")
    b.add("timeseries", "Fused anomaly score", "reveal_anomaly_score; windows at or above 1 (red line) are "
          "anomalous, two in a row open an incident.",
          [ts(f"reveal_anomaly_score{{{h}}}", "fused")], w=12, h=8, field=THRESHOLD_1)
    b.add("timeseries", "Score by subsystem", "reveal_subsystem_anomaly_score: the share of the fused score each "
          "subsystem's channels explain.",
          [ts(f"reveal_subsystem_anomaly_score{{{h}}}", "{{subsystem}}")], w=12, h=8,
          overrides=SUBSYSTEM_OVERRIDES)
    b.add("table", "Incidents in range", "Every (subsystem, focus, leading channel) that had an incident open in "
          "the time range.",
          [ts(f"max_over_time(reveal_incident_active{{{h}}}[$__range])", instant=True, fmt="table")], w=12, h=6,
          transformations=[TABLE_LABELS])
    b.add("stat", "Model", "1: a reference model is fitted; 0: warming up or relearning.",
          [ts(f"reveal_model_ready{{{h}}}", "ready", instant=True),
           ts(f"reveal_regimes_remembered{{{h}}}", "regimes remembered", instant=True)], w=6, h=6)
    b.add("stat", "Windows scored / symptom-led (range)", "Windows scored, and those a symptom's step flagged.",
          [ts(f"increase(reveal_windows_scored_total{{{h}}}[$__range])", "scored", instant=True),
           ts(f"increase(reveal_symptom_led_windows_total{{{h}}}[$__range])", "symptom-led", instant=True)],
          w=6, h=6, field={"decimals": 0})
    b.row("CPU and pressure")
    b.add("timeseries", "CPU time (cores)", "/proc/stat user, system, iowait and steal, all CPUs (ticks / 100).",
          [ts(f'rate({{__name__=~"reveal_proc_stat_(user|system|iowait|steal)_total", {h}, entity=""}}[1m]) '
              f'/ 100', "{{channel}}")], w=12, h=8, unit="none")
    b.add("timeseries", "Pressure stall (avg10)", "/proc/pressure: share of time tasks waited for CPU, memory or "
          "I/O (some) or all non-idle tasks did (full).",
          [ts(f'{{__name__=~"reveal_proc_pressure_(cpu|memory|io)_(some|full)_avg10", {h}}}', "{{channel}}")],
          w=12, h=8, unit="percent")
    b.row("Memory, network, disk")
    b.add("timeseries", "Memory available", "/proc/meminfo MemAvailable.",
          [ts(f"reveal_proc_meminfo_MemAvailable{{{h}}} * 1024", "MemAvailable")], w=8, h=8, unit="bytes")
    b.add("timeseries", "Network (bytes/s)", "/proc/net/dev received (+) and sent (-) per interface.",
          [ts(f'rate(reveal_proc_net_dev_rx_bytes_total{{{h}, entity!="lo"}}[1m])', "rx {{entity}}"),
           ts(f'-rate(reveal_proc_net_dev_tx_bytes_total{{{h}, entity!="lo"}}[1m])', "tx {{entity}}")],
          w=8, h=8, unit="Bps")
    b.add("timeseries", "TCP retransmits and disk busy", "Segments retransmitted per second (/proc/net/snmp), "
          "and the share of time each disk had I/O in flight (/proc/diskstats io_time).",
          [ts(f"rate(reveal_proc_net_snmp_Tcp_RetransSegs_total{{{h}}}[1m])", "TCP retransmits/s"),
           ts(f"rate(reveal_proc_diskstats_io_time_seconds_total{{{h}}}[1m])", "busy {{entity}}")], w=8, h=8)
    b.row("GPUs (NVML)")
    b.add("timeseries", "GPU utilisation", "NVML utilization.gpu and, where the GPU has them, GPM SM and tensor "
          "activity.",
          [ts(f'{{__name__=~"reveal_nvml_(utilization_gpu|gpm_sm_util|gpm_any_tensor_util)", {h}}}',
              "{{entity}} {{__name__}}")], w=8, h=8, unit="percent")
    b.add("timeseries", "GPU power and temperature", "NVML power draw (W) and GPU temperature (C).",
          [ts(f"reveal_nvml_power_usage{{{h}}}", "{{entity}} W"),
           ts(f"reveal_nvml_temperature_gpu{{{h}}}", "{{entity}} C")], w=8, h=8)
    b.add("timeseries", "GPU throttling and errors", "Clock throttle reasons active (sum of NVML's flags other "
          "than idle), XID events and double-bit ECC errors in the last 10 min.",
          [ts(f'sum by (entity) ({{__name__=~"reveal_nvml_clocks_throttle_reasons_.*", '
              f'__name__!="reveal_nvml_clocks_throttle_reasons_gpu_idle", {h}}})', "{{entity}} throttle reasons"),
           ts(f"increase(reveal_nvml_xid_events_total{{{h}}}[10m])", "{{entity}} XID"),
           ts(f"increase(reveal_nvml_ecc_dbe_vol_total{{{h}}}[10m])", "{{entity}} ECC DBE")], w=8, h=8)
    b.add("timeseries", "GPU health", "reveal_gpu_up: 1 while the GPU answers, 0 once NVML reported it lost or "
          "an XID 79 said it fell off the bus; XID errors by code in the last 10 min (counts kept across agent "
          "restarts).",
          [ts(f"reveal_gpu_up{{{h}}}", "{{gpu}} up"),
           ts(f"increase(reveal_gpu_xid_errors_total{{{h}}}[10m])", "{{gpu}} XID {{xid}}")], w=24, h=6)
    # NVLink and InfiniBand in one place (issue #20 item 3): per-link NVLink counters are
    # summed per GPU, IB port counters shown per device.
    b.row("Interconnect (NVLink, InfiniBand)")
    b.add("timeseries", "Interconnect bandwidth (bytes/s)", "NVLink data sent and received per GPU (all links; "
          "NVML NVLINK_THROUGHPUT_DATA), InfiniBand/RoCE port data per device (/sys/class/infiniband "
          "port_xmit_data, port_rcv_data). Sent shown negative.",
          [ts(f'sum by (entity) (rate({{__name__=~"{NVLINK_RX}", {h}}}[1m]))', "NVLink rx {{entity}}"),
           ts(f'-sum by (entity) (rate({{__name__=~"{NVLINK_TX}", {h}}}[1m]))', "NVLink tx {{entity}}"),
           ts(f"rate(reveal_rdma_port_rcv_data_total{{{h}}}[1m])", "IB rx {{entity}}"),
           ts(f"-rate(reveal_rdma_port_xmit_data_total{{{h}}}[1m])", "IB tx {{entity}}")], w=12, h=8, unit="Bps")
    b.add("timeseries", "Interconnect errors (per s)", "NVLink replay, recovery and CRC errors per GPU (all "
          "links); InfiniBand receive errors, symbol errors, discarded sends and link downs per device.",
          [ts(f'sum by (entity) (rate({{__name__=~"{NVLINK_ERRORS}", {h}}}[1m]))', "NVLink errors {{entity}}"),
           ts(f'rate({{__name__=~"{IB_ERRORS}", {h}}}[1m])', "{{entity}} {{channel}}")], w=12, h=8)
    b.row("Containers (cgroups)")
    b.add("timeseries", "CPU by cgroup (cores)", "cpu.stat usage of each watched cgroup.",
          [ts(f"rate(reveal_cgroup_cpu_stat_usage_usec_seconds_total{{{h}}}[1m])", "{{entity}}")], w=12, h=8,
          unit="none")
    b.add("timeseries", "CPU pressure by cgroup (avg10)", "cpu.pressure some of each watched cgroup: who waits.",
          [ts(f"reveal_cgroup_cpu_pressure_some_avg10{{{h}}}", "{{entity}}")], w=12, h=8, unit="percent")
    return b


def incidents():
    s = 'job="$job", instance=~"$instance"'
    b = Board("reveal-incidents", "Reveal / Incident timeline",
              "When each host had an incident open, by subsystem and leading channel; absences of a source; "
              "incidents opened and workload changes over time.",
              [var_datasource(), JOB_VAR,
               var_query("instance", "Hosts", 'label_values(reveal_build_info{job="$job"}, instance)', multi=True)],
              annotations=[{"name": "Incidents opened", "datasource": DS, "enable": True, "iconColor": "red",
                            "expr": f"changes(reveal_incidents_total{{{s}}}[1m]) > 0", "step": "30s",
                            "titleFormat": "{{subsystem}} incident", "textFormat": "{{instance}}",
                            "tagKeys": "instance,subsystem", "useValueForTime": False}])
    b.add("state-timeline", "Incidents open", "One lane per host and subsystem: red while an incident is open, "
          "yellow while one is pending (open, not reported until it lasts detect.min_duration; it may end as a "
          "transient).",
          [ts(f"max by (instance, subsystem) (reveal_incident_active{{{s}}}) "
              f"or 0.5 * max by (instance, subsystem) (reveal_incident_pending{{{s}}})", "{{instance}} {{subsystem}}")],
          w=24, h=10, field={"mappings": [{"type": "value", "options": {"1": {"text": "incident", "color": "red"},
                                                                        "0.5": {"text": "pending", "color": "yellow"}}}],
                             "custom": {"fillOpacity": 80}},
          options={"showValue": "never", "mergeValues": True})
    b.add("state-timeline", "Leading channel", "The channel that led each open incident (top_channel).",
          [ts(f"max by (instance, top_channel) (reveal_incident_active{{{s}}})", "{{instance}} {{top_channel}}")],
          w=24, h=8, options={"showValue": "never", "mergeValues": True},
          field={"mappings": [{"type": "value", "options": {"1": {"text": "open", "color": "orange"}}}]})
    b.add("state-timeline", "Sources gone silent", "Absence incidents: a source that stopped reporting "
          "(reveal_absence_active).",
          [ts(f"max by (instance, source) (reveal_absence_active{{{s}}}) "
              f"or max by (instance, source) (0 * reveal_absence_incidents_total{{{s}}})", "{{instance}} {{source}}")],
          w=24, h=8, options={"showValue": "never", "mergeValues": True},
          field={"mappings": [{"type": "value", "options": {"0": {"text": "reporting", "color": "green"},
                                                            "1": {"text": "silent", "color": "red"}}}]})
    b.add("timeseries", "Incidents opened per 10 min", "By subsystem, on the selected hosts.",
          [ts(f"sum by (subsystem) (increase(reveal_incidents_total{{{s}}}[10m]))", "{{subsystem}}")], w=12, h=8,
          overrides=SUBSYSTEM_OVERRIDES, field=STACKED_BARS)
    b.add("timeseries", "Workload changes per 10 min", "Anomalous stretches without a symptom, per host.",
          [ts(f"sum by (instance) (increase(reveal_workload_changes_total{{{s}}}[10m]))", "{{instance}}")],
          w=12, h=8)
    return b


BOARDS = {"reveal-fleet.json": fleet, "reveal-host.json": host, "reveal-incidents.json": incidents}


def render(make):
    return json.dumps(make().json(), indent=2, ensure_ascii=False) + "\n"


def exprs():
    for name, make in BOARDS.items():
        d = make().json()
        for p in d["panels"]:
            for t in p.get("targets", []):
                yield {"dashboard": name, "panel": p["title"], "expr": t["expr"]}
        for a in d["annotations"]["list"]:
            if "expr" in a:
                yield {"dashboard": name, "panel": "annotation " + a["name"], "expr": a["expr"]}
        for v in d["templating"]["list"]:
            if v["type"] == "query":
                yield {"dashboard": name, "panel": "variable " + v["name"], "expr": v["definition"]}


def main(argv):
    mode = argv[1] if len(argv) > 1 else ""
    if mode not in ("", "--check", "--exprs"):
        print(f"dashboards.py: unknown argument '{mode}' (usage: dashboards.py [--check|--exprs])", file=sys.stderr)
        return 2
    if mode == "--exprs":
        for e in exprs():
            print(json.dumps(e))
        return 0
    stale = []
    for name, make in BOARDS.items():
        path = os.path.join(HERE, name)
        text = render(make)
        if mode == "--check":
            if not os.path.isfile(path) or open(path).read() != text:
                stale.append(name)
        else:
            with open(path, "w") as f:
                f.write(text)
    if stale:
        print(f"dashboards.py: {', '.join(stale)} differ from deploy/grafana/dashboards.py; run it and commit both",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
