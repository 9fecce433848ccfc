#!/usr/bin/env python3
# per-pattern.py OUT...: for each score-exp.sh OUT folder, the mean |error| per pattern of the names of 100 us and more
# but gemm_50us and wait_1ms, build 1 -> build 2 (from OUT/*/compare.txt)
import sys,glob,re,os,collections
# per pattern mean |error| of build 2 vs build 1 over compare.txt files; rows >=100us limits via offline-score not replicated
for out in sys.argv[1:]:
    acc=collections.defaultdict(lambda:[[],[]])
    for f in glob.glob(out+'/*/compare.txt'):
        for line in open(f):
            m=re.match(r'^(\w[\w-]*)\s+(\S+)\s+solo\s+(\S+)\s+\|\s+(\S+)\s+(\S+)\s+\|\s+(\S+)\s+(\S+)',line)
            if not m: continue
            pat,name=m.group(1),m.group(2)
            if name in('gemm_50us','wait_1ms'): continue
            try: e1=float(m.group(5)); e2=float(m.group(7))
            except: continue
            acc[pat][0].append(abs(e1)); acc[pat][1].append(abs(e2))
    print(os.path.basename(out), '  '.join('%s(%d) %.2f->%.2f'%(p,len(v[0]),sum(v[0])/len(v[0]),sum(v[1])/len(v[1])) for p,v in sorted(acc.items())))
