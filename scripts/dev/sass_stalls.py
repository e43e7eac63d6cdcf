#!/usr/bin/env python3
"""Warp-stall samples of an ncu source page (SASS), as scripts/dev/ncu_source.sh writes it
(`ncu --section SourceCounters --page source --print-source sass --csv`): totals by stall reason, shared-memory
wavefronts against ideal (bank conflicts), and the 25 instructions with the most samples.
  python3 scripts/dev/sass_stalls.py a.sass.csv [b.sass.csv ...]   (gzip files are read too)
"""
import gzip
import csv,sys,collections
def num(x):
    try: return float(x.replace(',',''))
    except: return 0.0
for fn in sys.argv[1:]:
    lines=(gzip.open(fn,'rt') if fn.endswith('.gz') else open(fn)).read().splitlines()
    i=[k for k,l in enumerate(lines) if l.startswith('"Address"')][0]
    rows=list(csv.DictReader(lines[i:]))
    tot=collections.Counter()
    stall_cols=[c for c in rows[0] if c.startswith('stall_') and 'Not Issued' not in c]
    S=sum(num(r['Warp Stall Sampling (All Samples)']) for r in rows)
    I=sum(num(r['Instructions Executed']) for r in rows)
    sw=sum(num(r['L1 Wavefronts Shared']) for r in rows); swi=sum(num(r['L1 Wavefronts Shared Ideal']) for r in rows); swe=sum(num(r['L1 Wavefronts Shared Excessive']) for r in rows)
    for r in rows:
        for c in stall_cols: tot[c]+=num(r[c])
    print("==",fn,"rows",len(rows),"samples",S,"warp insts",I,"smem wavefronts",sw,"ideal",swi,"excess",swe)
    print("  stalls:", ", ".join(f"{k[6:]}={v/S*100:.1f}%" for k,v in tot.most_common(8)))
    top=sorted(rows,key=lambda r:-num(r['Warp Stall Sampling (All Samples)']))[:25]
    for r in top:
        st=sorted(((num(r[c]),c[6:]) for c in stall_cols),reverse=True)[:2]
        print(f"  {r['Address']:>6} {num(r['Warp Stall Sampling (All Samples)'])/S*100:5.1f}% ex={num(r['Instructions Executed']):9.0f} {r['Source'][:60]:60s} {st}")
