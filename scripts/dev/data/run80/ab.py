import csv,sys,glob,collections,re,math
# usage: ab.py prefix  -> table of us per (shape,kernel) per variant (mean over reps)
prefix=sys.argv[1]
files=sorted(glob.glob(prefix+'*_r*.csv'))
data=collections.defaultdict(lambda: collections.defaultdict(list))
lt=collections.defaultdict(lambda: collections.defaultdict(list))
variants=[]
for f in files:
    v=re.sub(r'_r\d+\.csv$','',f[len(prefix):])
    if v not in variants: variants.append(v)
    for r in csv.DictReader(open(f)):
        key=(int(r['M']),int(r['N']),int(r['K']),r['bias'])
        if r['what']=='cublaslt': lt[key][v].append(float(r['us'])); continue
        if r['what']=='tgemm mm': continue
        data[(key,r['what'])][v].append(float(r['us']))
print('variants:',variants)
for (key,k),d in sorted(data.items()):
    l=[sum(lt[key][v])/len(lt[key][v]) for v in variants if lt[key][v]]
    ltm=sum(l)/len(l)
    vals=[sum(d[v])/len(d[v]) if d[v] else float('nan') for v in variants]
    print(f"{key[0]:5d} {key[1]:6d} {key[2]:6d} {key[3][0]} {k[:42]:42s} lt {ltm:6.1f} | "+' '.join(f"{x:6.1f}" for x in vals))
