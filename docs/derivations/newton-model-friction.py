# Classifies the stalled Newton iterations of the tie by potential and its friction pairs (docs/performance.md,
# "Why the long steps' Newton model is poor"): run on the stderr of
# `NEWTON_FD=1 NEWTON_DIAG=1 step_profile sq.surec --window 30` with newton-model-diagnostics.patch
# applied: `python3 newton-model-friction.py diag.txt`.
import re,collections,sys
cnt=collections.Counter(); tot=0
ys=[]
for line in open(sys.argv[1]):
    if 'FD it' not in line: continue
    m=re.findall(r'part(\d+): nonlin (\S+) \|g\| (\S+);',line)
    d={int(k):float(a) for k,a,b in m}
    rem=re.search(r'\|g\(1\)-\(g\+Hdz\)\| (\S+)',line)
    g=re.search(r'of \|g\| (\S+);',line)
    if not rem or len(d)<8: continue
    r=float(rem.group(1)); gg=float(g.group(1))
    if r < 0.05*gg: continue
    best=max((0,1,2,3),key=lambda k:d[k])
    if not (best==1 and d[5]<0.2*d[1]): continue
    tot+=1
    p0=line[line.index('PAIRS0'):line.index('PAIRS1')]
    p1=line[line.index('PAIRS1'):]
    f0=dict(re.findall(r'FR\((\d+,\d+)\) y/eps (\S+)',p0))
    f1=dict(re.findall(r'FR\((\d+,\d+)\) y/eps (\S+)',p1))
    cats=set()
    for k in f0:
        if k not in f1: continue
        a,b=float(f0[k]),float(f1[k])
        ys.append((a,b))
        if a<1<=b: cats.add('stick->slide')
        elif b<1<=a: cats.add('slide->stick')
        elif a<1 and b<1: cats.add('stick')
        else: cats.add('slide')
    if 'stick->slide' in cats: c='a pair breaks loose'
    elif 'slide->stick' in cats: c='a pair sticks'
    elif cats=={'stick'}: c='all stuck'
    elif cats=={'slide'}: c='all sliding'
    elif not cats: c='no friction pair at the node'
    else: c='stuck and sliding'
    cnt[c]+=1
print(tot, cnt.most_common())
import statistics
st=[a for a,b in ys if a<1 and b<1]
print('stuck pairs y0/eps median', statistics.median(st) if st else None, 'n', len(st))
sl=sorted(a for a,b in ys if a>=1 and b>=1)
if sl:
    q=lambda p: sl[int(p*(len(sl)-1))]
    print('sliding pairs y0/eps: n', len(sl), 'p10', q(0.1), 'median', q(0.5), 'p90', q(0.9))
    # change of y relative
    ch=sorted(abs(b-a)/a for a,b in ys if a>=1 and b>=1)
    print('relative change of slip over the step: median', ch[len(ch)//2], 'p90', ch[int(0.9*(len(ch)-1))])

# Which potential carries the miss, over every checked iteration whose miss exceeds 5 % of |g|
# (the section's first table): parts 0–3 are the obstacle contact, self-contact, the needle's
# attachment and the holds (channels and grips); 4 and 5 the obstacle and self-contact again,
# evaluated without friction.
parts = collections.Counter()
checked = 0
for line in open(sys.argv[1]):
    if 'FD it' not in line:
        continue
    d = {int(k): float(a) for k, a, b in re.findall(r'part(\d+): nonlin (\S+) \|g\| (\S+);', line)}
    rem = re.search(r'\|g\(1\)-\(g\+Hdz\)\| (\S+)', line)
    g = re.search(r'of \|g\| (\S+);', line)
    if not rem or len(d) < 8 or float(rem.group(1)) < 0.05 * float(g.group(1)):
        continue
    checked += 1
    best = max((0, 1, 2, 3), key=lambda k: d[k])
    if best == 0:
        parts['obstacle, friction' if d[4] < 0.2 * d[0] else 'obstacle, normal'] += 1
    elif best == 1:
        parts['self-contact, friction' if d[5] < 0.2 * d[1] else 'self-contact, normal'] += 1
    else:
        parts['needle attachment' if best == 2 else 'channels and grips'] += 1
print(checked, parts.most_common())
