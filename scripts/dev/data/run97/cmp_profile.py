import csv,glob,collections,math,sys
files=sorted(glob.glob(sys.argv[1]))
data=collections.defaultdict(lambda: collections.defaultdict(list)); lt=collections.defaultdict(list)
for f in files:
    for r in csv.DictReader(open(f)):
        key=(int(r['M']),int(r['N']),int(r['K']),r['bias'])
        if r['what']=='cublaslt': lt[key].append(float(r['us'])); continue
        if r['what']=='tgemm mm': continue
        data[key][r['what']].append(float(r['us']))
prof=collections.defaultdict(list)
for r in csv.DictReader(open('/tmp/prof.csv')):
    if r['ok']!='1': continue
    key=(int(r['M']),int(r['N']),int(r['K']),r['bias'])
    prof[key].append((float(r['us']),r['kernel']))
ks=sorted({k for d in data.values() for k in d})
print('kernels', ks)
flips=[]
g=lambda v: math.exp(sum(map(math.log,v))/len(v))
per=collections.defaultdict(list)
for key in sorted(data):
    l=sum(lt[key])/len(lt[key])
    t={k: sum(v)/len(v) for k,v in data[key].items()}
    # profile: best lt variant and best own relative to profile's default cublaslt
    p=prof.get(key,[])
    pl=[u for u,k in p if k=='cublaslt']
    plbest=min([u for u,k in p if k.startswith('cublaslt')] or [float('nan')])
    pown=min([u for u,k in p if not k.startswith('cublaslt')] or [float('inf')])
    scale = l/pl[0] if pl else float('nan')   # this run's lt vs profile's lt
    lbest=plbest*scale; own=pown*scale
    newbest=min(t.values())
    kbest=min(t,key=t.get)
    pick_old=min(lbest,own); pick_new=min(pick_old,newbest)
    per['old'].append(l/pick_old); per['new'].append(l/pick_new)
    mark='FLIP' if newbest<pick_old*0.99 else ''
    print('%-22s lt %6.1f ltbest %6.1f own %6.1f | '%(str(key[:3]),l,lbest,own)+' '.join('%6.1f'%t[k] for k in ks)+' | %s %.3f %s'%(kbest.replace('sm90_bf16_',''), pick_old/newbest, mark))
print('band geomean vs lt default: old %.4f new %.4f'%(g(per['old']),g(per['new'])))
