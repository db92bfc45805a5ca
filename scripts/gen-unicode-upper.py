#!/usr/bin/env python3
# Generates the run table of proto/unicode.c (unicode_upper): the Unicode
# simple uppercase mapping of the BMP above U+007F, as runs of
# (first, last, stride 1 or 2, delta).  Python's unicodedata version decides
# the Unicode version (Debian 12: 14.0).  Mappings to ASCII are left out
# (dotless i, long s), as Windows does.
#   python3 scripts/gen-unicode-upper.py table   -> prints the C rows
import unicodedata
m={}
for c in range(0x80,0x10000):
    if 0xD800<=c<0xE000: continue
    u=chr(c).upper()
    if len(u)!=1:
        t=chr(c).title()
        u=t if len(t)==1 else chr(c)
    if ord(u)!=c and ord(u)>=0x80:
        m[c]=ord(u)-c
# runs: (start,end,stride,delta)
keys=sorted(m); runs=[]
i=0
while i<len(keys):
    c=keys[i]; d=m[c]
    # try stride 1
    j=i
    while j+1<len(keys) and keys[j+1]==keys[j]+1 and m[keys[j+1]]==d: j+=1
    n1=j-i+1
    k=i
    while k+1<len(keys) and keys[k+1]==keys[k]+2 and m[keys[k+1]]==d: k+=1
    n2=k-i+1
    if n2>n1 and n2>1:
        runs.append((c,keys[k],2,d)); i=k+1
    else:
        runs.append((c,keys[j],1,d)); i=j+1
import sys
if len(sys.argv) > 1 and sys.argv[1] == "table":
    cells = ["{ 0x%04X, 0x%04X, 0x%04X, %d }," % (a, b, d & 0xFFFF, st)
             for a, b, st, d in runs]
    for i in range(0, len(cells), 2):
        print("\t" + " ".join(cells[i:i + 2]))
else:
    print("%d mappings in %d runs" % (len(m), len(runs)))
