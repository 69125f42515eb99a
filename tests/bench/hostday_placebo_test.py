#!/usr/bin/env python3
"""Unit test of the host day scorer's placebo (bench/hostday/hostday.py add_step_noise()): a fault
that slows its job beyond what the job varies by on its own is measurable, one within that is not,
a job too short for a placebo borrows its workload's other jobs' or stays unknown, and placebo
intervals keep clear of faults and of other jobs' starts; and impact_of() (issue #22), an
incident's estimated slowdown against the steps. Synthetic step logs; no reveal binary.
    usage: hostday_placebo_test.py REPO"""
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.join(sys.argv[1] if len(sys.argv) > 1 else ".", "bench", "hostday"))
import hostday as H  # noqa: E402

S = 1_000_000_000
T0 = 1_800_000_000 * S


def write_steps(out, jid, t0, t1, step_s, slow=(), jitter=0.02, seed=1):
    """One line per step from t0 to t1 (ns); inside each (a, b, factor) of `slow` steps take factor× as long."""
    rnd = random.Random(seed)
    os.makedirs(os.path.join(out, "jobs", jid), exist_ok=True)
    t, n = t0, 0
    with open(os.path.join(out, "jobs", jid, "steps.log"), "w") as f:
        while t < t1:
            s = step_s * (1 + rnd.uniform(-jitter, jitter))
            for a, b, k in slow:
                if a <= t < b:
                    s *= k
            t += int(s * S)
            n += 1
            f.write(f"{t / S:.3f} {n} {s:.4f}\n")


def job(jid, t0, t1, workload="resnet18"):
    return {"id": jid, "workload": workload, "start_unix_ns": t0, "end_unix_ns": t1}


def fault(fid, jid, a, b, effect):
    return {"id": fid, "job": jid, "start_unix_ns": a, "end_unix_ns": b, "step_effect_pct": effect}


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)


def main():
    with tempfile.TemporaryDirectory() as out:
        # j1: 15 min of 0.1 s steps with a checkpoint every 100 s (15 s of 3× slower steps: a 40 s
        # interval varies by up to about +33 %); f1 doubles the steps for 40 s at +5 min, f2 slows
        # them by 10 % at +10 min (both between checkpoints)
        j1 = job("j1", T0, T0 + 900 * S)
        f1 = fault("f1", "j1", T0 + 320 * S, T0 + 360 * S, None)
        f2 = fault("f2", "j1", T0 + 620 * S, T0 + 660 * S, None)
        ckpt = [(T0 + k * 100 * S, T0 + (k * 100 + 15) * S, 3.0) for k in range(1, 9)]
        write_steps(out, "j1", j1["start_unix_ns"], j1["end_unix_ns"], 0.1,
                    slow=ckpt + [(f1["start_unix_ns"], f1["end_unix_ns"], 2.0), (f2["start_unix_ns"], f2["end_unix_ns"], 1.1)])
        for f in (f1, f2):
            f.update(H.step_effect(os.path.join(out, "jobs", "j1", "steps.log"), f["start_unix_ns"], f["end_unix_ns"]))
        check(f1["step_effect_pct"] > 40 and -20 < f2["step_effect_pct"] < 20, f"effects {f1['step_effect_pct']}, {f2['step_effect_pct']}")
        # j2: 100 s of its own, same workload as j3; j3 long and steady; j4 short, alone in its workload
        j2 = job("j2", T0 + 1000 * S, T0 + 1100 * S, "vit")
        j3 = job("j3", T0 + 1200 * S, T0 + 1800 * S, "vit")
        j4 = job("j4", T0 + 1900 * S, T0 + 2000 * S, "gru")
        f3 = fault("f3", "j2", T0 + 1080 * S, T0 + 1095 * S, 80.0)
        f4 = fault("f4", "j4", T0 + 1980 * S, T0 + 1995 * S, 80.0)
        for j in (j2, j3, j4):
            write_steps(out, j["id"], j["start_unix_ns"], j["end_unix_ns"], 0.2, seed=len(j["id"]))
        labels = {"jobs": [j1, j2, j3, j4], "faults": [f1, f2, f3, f4], "events": []}
        H.add_step_noise(out, labels, labels["faults"])
        check(f1["placebo_pool"] == "job" and f1["placebo_intervals"] >= H.PLACEBO_MIN, f"f1 pool {f1}")
        check(20 < f1["step_noise_pct"] < f1["step_effect_pct"], f"checkpoints' noise {f1['step_noise_pct']}, {f1}")
        check(f1["effect_measurable"] is True, "doubled steps: measurable")
        check(f2["effect_measurable"] is False, f"10 % within the checkpoints' variation: not measurable, {f2}")
        check(f3["step_noise_pct"] < 10, f"a steady job's noise {f3['step_noise_pct']}")
        check(f3["placebo_pool"] == "workload" and f3["effect_measurable"] is True, f"short job, borrowed: {f3}")
        check(f4["placebo_pool"] is None and f4["effect_measurable"] is None and f4["step_noise_pct"] is None,
              f"short job alone in its workload: unknown, {f4}")

        # placebo intervals keep clear of every fault (+ its recovery) and of other jobs' starts
        rows = H.read_steps(os.path.join(out, "jobs", "j1", "steps.log"))
        spans = [(f1["start_unix_ns"], f1["end_unix_ns"]), (f2["start_unix_ns"], f2["end_unix_ns"])]
        free = H.placebo_effects(rows, 0, 40 * S, j1["start_unix_ns"], j1["end_unix_ns"], spans)
        check(free and max(free) < 50 and min(free) > -30, f"a placebo touched a fault: {min(free)}..{max(free)}")
        near = H.placebo_effects(rows, 0, 40 * S, j1["start_unix_ns"], j1["end_unix_ns"], spans,
                                 others=[T0 + 450 * S])
        check(0 < len(near) < len(free), f"another job's start not kept clear: {len(near)} vs {len(free)}")
        every = H.placebo_effects(rows, 0, 40 * S, j1["start_unix_ns"], j1["end_unix_ns"], [])
        check(max(every) > 60, f"without the fault spans, the doubled steps are in the placebo: {max(every)}")
        check(H.placebo_effects([], 0, 40 * S, j1["start_unix_ns"], j1["end_unix_ns"], []) == [], "no steps: none")
        # issue #22: the incident's estimated slowdown of the fault's job against its steps
        inc = {"impact": {"slowdown": 0.5, "tenants": [{"cgroup": "hd/j2", "throughput": 0.9},
                                                        {"cgroup": "hd/j1", "throughput": 0.55}]}}
        r = H.impact_of(inc, {"job_cgroup": "hd/j1", "step_effect_pct": 100.0})
        check(r == {"impact_est_loss_pct": 45.0, "measured_loss_pct": 50.0, "impact_error_pts": -5.0},
              f"impact of the fault's own job, +100 % steps = 50 % of its speed lost: {r}")
        r = H.impact_of({"impact": {"slowdown": None, "basis": "unknown: gpu", "tenants": []}},
                        {"job_cgroup": "hd/j1", "step_effect_pct": None})
        check(r == {"impact_unknown": "unknown: gpu"}, f"unknown impact, no steps: {r}")
        check(H.impact_of({}, {"job_cgroup": "hd/j3", "step_effect_pct": -50.0}) == {"measured_loss_pct": -100.0},
              "no impact field; faster steps are a negative loss")
    print("ok: hostday placebo")


if __name__ == "__main__":
    main()
