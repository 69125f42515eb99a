#!/usr/bin/env python3
# Checks a reveal_make_long_store output (bench/scale/make_long_store.cpp, issue #19) against its
# sources, from CSV exports (`reveal export X.db -o X.csv`) and the tool's --verbose block list:
# across every block join each counter moves by the block's own first delta, inside a block every
# counter delta is the source's own (so the output's negative deltas are exactly the source's:
# resets, or gauge-like counters), gauges and states are copied as they are. Python stdlib only.
#
# usage: reveal_make_long_store --verbose ... 2>&1 | grep ^block > BLOCKS.txt
#        check_joins.py OUT.csv OUT.db BLOCKS.txt SRC0.csv [SRC1.csv ...]   (sources in argument order)
import csv, math, sqlite3, sys, re
out_csv, out_db, blocks_txt, *srcs = sys.argv[1:]
kinds = dict(sqlite3.connect(f"file:{out_db}?mode=ro", uri=True).execute("select name, kind from channels").fetchall())
def load(p):
    with open(p) as f:
        r = csv.reader(f); hdr = next(r)
        rows = [[int(row[0])] + [float(x) if x != '' else math.nan for x in row[1:]] for row in r]
    return hdr, rows
oh, orows = load(out_csv)
S = [load(p) for p in srcs]
src_index = [{int(row[0]): i for i, row in enumerate(rows)} for _, rows in S]
names = oh[2:]
counters = [i for i, n in enumerate(names) if kinds[n] == 'counter']
print(f"{len(orows)} rows, {len(names)} channels, {len(counters)} counters")
blocks = [tuple(map(int, m.groups())) for m in re.finditer(r"out (\d+) \+(\d+) from source (\d+) t (\d+)\.\.", open(blocks_txt).read())]
bad_inside = bad_join = bad_gauge = neg_out = neg_src_inside = 0
joins_checked = 0
for (o0, n, s, t0) in blocks:
    sh, srows = S[s]
    col = {name: j for j, name in enumerate(sh)}
    i0 = src_index[s][t0]
    for k in range(n):
        orow, srow = orows[o0 + k], srows[i0 + k]
        for c, name in enumerate(names):
            v = orow[2 + c]; sv = srow[col[name]] if name in col else math.nan
            if kinds[name] != 'counter':
                if not (v == sv or (math.isnan(v) and math.isnan(sv))): bad_gauge += 1
            elif math.isnan(sv) != math.isnan(v): bad_inside += 1
        if k > 0:
            prow, psrow = orows[o0 + k - 1], srows[i0 + k - 1]
            for c in counters:
                name = names[c]
                if name not in col: continue
                d = orow[2 + c] - prow[2 + c]; sd = srow[col[name]] - psrow[col[name]]
                if math.isnan(d) and math.isnan(sd): continue
                if not (abs(d - sd) <= 1e-6 * max(1.0, abs(sd))): bad_inside += 1
                if sd < 0: neg_src_inside += 1
    if o0 > 0:  # the join before this block
        orow, prow = orows[o0], orows[o0 - 1]
        srow = srows[i0]; nrow = srows[i0 + 1] if n > 1 else None
        for c in counters:
            name = names[c]
            if name not in col or math.isnan(orow[2 + c]) or math.isnan(prow[2 + c]): continue
            fd = (nrow[col[name]] - srow[col[name]]) if nrow else 0.0
            if math.isnan(fd): fd = 0.0
            joins_checked += 1
            if abs((orow[2 + c] - prow[2 + c]) - fd) > 1e-6 * max(1.0, abs(fd)): bad_join += 1
# negative deltas of counters over the whole output
for c in counters:
    prev = math.nan
    for r in orows:
        v = r[2 + c]
        if not math.isnan(v):
            if not math.isnan(prev) and v < prev: neg_out += 1
            prev = v
print(f"blocks {len(blocks)}, join checks {joins_checked}: {bad_join} wrong; in-block counter deltas differing from source {bad_inside}; gauges differing {bad_gauge}")
print(f"negative counter deltas: output {neg_out}, source inside the blocks used {neg_src_inside}")
