#!/usr/bin/env bash
# steady-lingers.sh FOLDER [profile]: NAME=L,... from the folder's steady runs reported by the current build
f=$1; prof=${2:-}
tmp=$(mktemp -d)
for s in $f/raw/steady.*.sqlite.xz; do
  [ -e "$s" ] || continue
  b=$(basename $s .sqlite.xz)
  xz -dc $s > $tmp/$b.sqlite
  build/truewatt report --json ${prof:+--profile $prof} $tmp/$b.sqlite > $tmp/$b.json 2>/dev/null
done
python3 - $tmp <<'PY'
import json,glob,sys
out=[]
for f in sorted(glob.glob(sys.argv[1]+'/*.json')):
    try: r=json.load(open(f))
    except Exception: continue
    for d in r['devices']:
        for n in d['names']:
            if n['launches']>100 and n.get('linger_j') is not None and n.get('time_s',0)>0:
                out.append('%s=%.2f'%(n['name'], n['linger_j']/n['time_s']))
print(','.join(out))
PY
rm -rf $tmp
