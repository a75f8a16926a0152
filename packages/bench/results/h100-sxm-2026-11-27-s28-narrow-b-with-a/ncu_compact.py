import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr_i = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
hdr = rows[hdr_i]
print("columns:", hdr)
data = [r for r in rows[hdr_i + 1:] if len(r) == len(hdr)]
col = {h: i for i, h in enumerate(hdr)}
S = col["Warp Stall Sampling (All Samples)"]; NI = col["Warp Stall Sampling (Not-issued Samples)"]; E = col["Instructions Executed"]
def num(x):
    try: return float(x.replace(",", ""))
    except: return 0.0
tot = sum(num(r[S]) for r in data)
print("instructions", len(data), "samples", tot, "executed", sum(num(r[E]) for r in data))
for r in data:
    if num(r[S]) > 0 or num(r[E]) > 0:
        print(f"{r[0]}|{r[1][:70]:<70}|{num(r[S]):6.0f}|{num(r[NI]):6.0f}|{num(r[E]):8.0f}")
print("TOP 30 by samples, nonzero columns:")
for r in sorted(data, key=lambda r: -num(r[S]))[:30]:
    print(r[0], r[1][:60], {h: r[i] for i, h in enumerate(hdr) if i > 1 and r[i] not in ("", "0", "0.0", "-")})
