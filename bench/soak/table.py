"""One row per minute of a soak CSV (bench/soak/run.sh): the sample closest to the middle of each
minute (node kills and Cloudly restarts fall on full minutes), the latency percentiles of that 10 s
sample, and the running totals of lost answers."""
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
if not rows:
    sys.exit("table: no samples")
cols = [("min", None), ("RSS KiB", "relay_rss_kib"), ("fds", "relay_fds"), ("thr", "relay_threads"),
        ("timers", "status_timers"), ("escrow", "status_escrow_runs"), ("reg", "nodes_registered"),
        ("fwd ok", "forwards_answered"), ("refused", "forwards_refused"), ("cut", "forwards_cut_by_close"),
        ("p50 us", "lat_p50_us"), ("p99 us", "lat_p99_us"), ("max us", "lat_max_us"), ("cpu %", "relay_cpu_pct"),
        ("load", "load1"), ("restarts", "cloudly_restarts"), ("lost", None)]
print("| " + " | ".join(c for c, _ in cols) + " |")
print("|" + "---|" * len(cols))
lost = 0
picked = set()
for r in rows:
    lost += int(r["forwards_lost"])
    t = float(r["t_s"])
    minute = int((t - 30) // 60 + 0.5) if t >= 25 else -1
    if minute < 0 or abs(t - (minute * 60 + 30)) > 5.5 or minute in picked:
        continue
    picked.add(minute)
    cells = []
    for name, key in cols:
        if name == "min":
            cells.append(f"{minute}.5")
        elif name == "lost":
            cells.append(f"{lost} fwd, {r['push_rounds_lost']} push, {r.get('hold_rounds_lost', '0')} hold")
        else:
            v = r[key]
            try:
                f = float(v)
                v = f"{f:.0f}" if key not in ("load1",) else f"{f:.1f}"
            except ValueError:
                pass
            cells.append(v)
    print("| " + " | ".join(cells) + " |")
