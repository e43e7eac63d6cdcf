#!/usr/bin/env python3
"""The k-step loop of each sm90 kernel in a cuobjdump SASS listing: its length and its R2UR / S2R / MOV / HGMMA counts
(the loop is the span from the target of the first backward branch after the first HGMMA to that branch).
cuobjdump is not in this machine's toolkit; the PyPI wheel nvidia-cuda-cuobjdump has it (unzip it anywhere).

    nvcc ... -c src/backends/sm90/sm90_bf16_tma.cu -o tma.o && cuobjdump -sass tma.o > tma.sass
    python3 scripts/dev/sass_kstep.py tma.sass [x]      (x: print the loop bodies)
"""
import re,sys
txt=open(sys.argv[1]).read().split('Function : ')[1:]
for f in txt:
    name=f.split('\n')[0][:110]
    ins=[re.sub(r'/\* 0x[0-9a-f]+ \*/','',l).strip() for l in f.split('\n') if re.search(r'/\*[0-9a-f]{4,}\*/',l)]
    idx=[i for i,l in enumerate(ins) if 'HGMMA' in l]
    if not idx: continue
    first=idx[0]
    # loop start: the target of the backward branch after the first group
    addr=lambda l: int(re.search(r'/\*([0-9a-f]+)\*/',l).group(1),16)
    end=None
    for i in range(first,len(ins)):
        m=re.search(r'BRA (0x[0-9a-f]+)',ins[i])
        if m and int(m.group(1),16) < addr(ins[first]): end=i; start_addr=int(m.group(1),16); break
    start=[i for i,l in enumerate(ins) if addr(l)==start_addr][0]
    body=ins[start:end+1]
    print(name, 'loop', len(body), 'instrs; R2UR', sum('R2UR' in l for l in body), 'S2R', sum('S2R' in l for l in body), 'MOV', sum(' MOV' in l or 'IMAD.MOV' in l for l in body), 'HGMMA', sum('HGMMA' in l for l in body))
    if len(sys.argv)>2: print('\n'.join(body))
