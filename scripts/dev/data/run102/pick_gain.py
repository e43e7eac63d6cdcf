import csv,math,collections,sys
g=lambda x: math.exp(sum(map(math.log,x))/len(x)) if x else 0
d=collections.defaultdict(dict)
for f in sys.argv[1:]:
  for r in csv.DictReader(open(f)):
    k=(int(r['M']),int(r['N']),int(r['K']),r['bias'])
    name = 'mm' if r['what']=='tgemm mm' else r['kernel']
    if r['what']=='cublaslt': continue
    d[k].setdefault(name,[]).append(float(r['x_cublaslt']))
old=[];new=[];flips=[]
for k,v in sorted(d.items()):
    mm=max(v['mm'])
    et=max([max(x) for n,x in v.items() if 'etma' in n] or [0])
    st=max([max(x) for n,x in v.items() if n!='mm' and 'etma' not in n] or [0])
    old.append(mm); new.append(max(mm,et))
    if et>mm*1.01: flips.append((k,round(mm,3),round(et,3),round(st,3)))
print('shapes',len(old),'mm geo',round(g(old),4),'with etma',round(g(new),4))
for f in flips: print(f)
