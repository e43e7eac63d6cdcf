import csv,sys,collections,re
f=sys.argv[1]
lines=open(f).read().splitlines()
i=[n for n,l in enumerate(lines) if l.startswith('"Address"')][0]
rows=list(csv.DictReader(lines[i:]))
tot=sum(int(r['Instructions Executed']) for r in rows)
samp=sum(int(r['Warp Stall Sampling (All Samples)']) for r in rows)
print(f, 'instructions', len(rows), 'executed', tot, 'samples', samp)
op=collections.Counter(); ops=collections.Counter()
for r in rows:
    s=r['Source'].strip()
    s=re.sub(r'^@!?U?P\w+\s+','',s)
    o=s.split()[0] if s else '?'
    op[o]+=int(r['Instructions Executed']); ops[o]+=int(r['Warp Stall Sampling (All Samples)'])
for o,c in op.most_common(25): print('%-28s %10d %5.1f%%  samples %6d'%(o,c,100*c/tot,ops[o]))
# hottest instructions
print('--- hottest')
for r in sorted(rows,key=lambda r:-int(r['Instructions Executed']))[:40]:
    print(r['Address'][-5:], '%9s'%r['Instructions Executed'], r['Source'].strip()[:90])
