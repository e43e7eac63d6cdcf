import csv,math,collections,sys
def load(f):
    d=collections.defaultdict(dict)
    for r in csv.DictReader(open(f)):
        if r['what'] in('cublaslt','tgemm mm'): continue
        d[(int(r['M']),int(r['N']),int(r['K']),r['bias'])][r['kernel']]=(float(r['us']),float(r['x_cublaslt']))
    return d
g=lambda x: math.exp(sum(map(math.log,x))/len(x)) if x else 0
def ab(f,a,b,show=False):
    d=load(f); rs=[];band=collections.defaultdict(list)
    for k,v in sorted(d.items()):
        if a in v and b in v:
            r=v[a][0]/v[b][0]; rs.append(r)
            band['<2048' if k[0]<2048 else '>=2048'].append(r)
            if show: print(k, round(v[a][0],1), round(v[b][0],1), round(r,3), round(v[a][1],3), round(v[b][1],3))
    print(f,a,'-> speedup of',b,': n',len(rs),'geo',round(g(rs),4),'min',round(min(rs),3),'max',round(max(rs),3), {k:(len(v),round(g(v),4)) for k,v in band.items()})
if __name__=='__main__':
    ab(sys.argv[1],sys.argv[2],sys.argv[3],len(sys.argv)>4)
