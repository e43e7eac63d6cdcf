import sys,collections,statistics as st
def launches(path):
    L=[];cur=None
    for line in open(path):
        if line.startswith('#'):
            cur={'hdr':line.strip(),'rows':[]}; L.append(cur); continue
        v=line.strip().split(','); 
        cur['rows'].append((int(v[0]),int(v[1]),[int(x) for x in v[2:]]))
    return L
for path in sys.argv[1:]:
    Ls=launches(path)
    byhdr=collections.OrderedDict()
    for l in Ls: byhdr.setdefault(l['hdr'],[]).append(l)
    for hdr,ls in byhdr.items():
        l=ls[-1]; rows=l['rows']
        t0=min(min(x for x in r[2] if x>0) for r in rows)
        t1=max(max(r[2]) for r in rows)
        print(path.split('/')[-1], hdr[2:], ' span %.1f us'%((t1-t0)/1e3))
        d=collections.defaultdict(list)
        for b,i,e in rows:
            if e[0]==0: continue
            d['wait_first(E1-E0)'].append(e[1]-e[0]); d['main(E2-E1)'].append(e[2]-e[1]); d['smem_part(E3-E2)'].append(e[3]-e[2])
            if e[4]: d['gpart+fence(E4-E3)'].append(e[4]-e[3]); d['atomic(E5-E4)'].append(e[5]-e[4]); d['sum+store(E6-E5)'].append(e[6]-e[5])
            else: d['store(E6-E3)'].append(e[6]-e[3])
            d['item(E6-E0)'].append(e[6]-e[0])
            d['start_off(E0-t0)'].append(e[0]-t0)
        items_per_block=collections.Counter(b for b,i,e in rows if e[0])
        print('   items/block: max %d min %d; blocks %d'%(max(items_per_block.values()),min(items_per_block.values()),len(items_per_block)))
        for k,v in d.items():
            v=[x/1e3 for x in v]
            print('   %-20s n=%4d mean %.2f med %.2f max %.2f'%(k,len(v),st.mean(v),st.median(v),max(v)))
        # first item start over blocks, per-block end
        ends=collections.defaultdict(int)
        for b,i,e in rows: ends[b]=max(ends[b],e[6])
        ev=sorted((x-t0)/1e3 for x in ends.values())
        print('   block end times: min %.1f med %.1f max %.1f'%(ev[0],ev[len(ev)//2],ev[-1]))
