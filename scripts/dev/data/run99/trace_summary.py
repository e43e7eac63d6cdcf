# Medians of the sm90 trace stamps (branch exp/sm90-trace, scripts/dev/sm90_trace_device.sh): python3 trace_summary.py trace.log
import re, collections, statistics, sys
sec = grid = last = None
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if line.startswith('== '): sec = line.split()[1].replace('sm90_bf16_', '') + ' ' + line.split()[2]; continue
    m = re.match(r'TRACE cta (\d+) of (\d+)', line)
    if m and int(m.group(1)) == 0: grid = int(m.group(2)); continue
    m = re.match(r'TRACE0 .* k=(\d+): init (-?\d+), first TMA issued (-?\d+), consumer start (-?\d+), mainloop done (-?\d+), staged (-?\d+), storer done (-?\d+), end (-?\d+)', line)
    if m:
        last = (int(m.group(1)), [int(x) for x in m.groups()[1:]])
        d[(sec, grid, last[0], 'TRACE0')].append(last[1]); continue
    m = re.match(r'TRACE1 producer: setmaxnreg done (-?\d+), scheduler built (-?\d+), tile coordinates (-?\d+), empty slot (-?\d+)', line)
    if m: d[(sec, grid, last[0], 'TRACE1')].append([int(x) for x in m.groups()])
print('TRACE0: init, first TMA issued, consumer start, mainloop done, staged, storer done, end (SM cycles from entry)')
print('TRACE1: producer setmaxnreg done, scheduler built, tile coordinates, empty slot passed')
for key, v in sorted(d.items()):
    print(key, len(v), [int(statistics.median(x[i] for x in v)) for i in range(len(v[0]))])
