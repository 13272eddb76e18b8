#!/usr/bin/env python3
"""Instruction mix of a kernel's hottest loop, from `cuobjdump -sass` text (stdin).

  cuobjdump -sass -fun MANGLED_NAME binary | scripts/sass_mix.py [LABEL]

The loop is the largest region [target, branch] closed by a backward BRA (the step loop of
the lean kernels: one iteration is one step). Prints one line: the loop's instruction count
and its split into FP64 pipe (DADD, DMUL, DFMA, DSETP, DMNMX, MUFU.*64*), integer and
logic, predicate/branch, load/store, and other; then the opcodes by count. Needs no GPU
(cuobjdump runs wherever the CUDA toolkit has it; docs/performance.md)."""
import collections
import re
import sys

label = sys.argv[1] if len(sys.argv) > 1 else "kernel"
lines = sys.stdin.read().splitlines()
# "        /*0a30*/                   DFMA R4, R6, R8, R4 ;"
ins = []
for line in lines:
    m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
    if not m:
        continue
    addr = int(m.group(1), 16)
    text = re.sub(r"^@!?U?P\w+\s+", "", m.group(2).strip())  # drop the predicate guard
    op = text.split()[0] if text else ""
    ins.append((addr, op, text))
if not ins:
    print("%s: no SASS found" % label)
    sys.exit(1)
by_addr = {a: i for i, (a, _, _) in enumerate(ins)}
best = None
for i, (addr, op, text) in enumerate(ins):
    if not op.startswith("BRA"):
        continue
    m = re.search(r"0x([0-9a-f]+)", text)
    if not m:
        continue
    target = int(m.group(1), 16)
    if target < addr and target in by_addr:
        span = (by_addr[target], i)
        if best is None or span[1] - span[0] > best[1] - best[0]:
            best = span
lo, hi = best if best else (0, len(ins) - 1)
body = [op for _, op, _ in ins[lo:hi + 1]]


def kind(op):
    base = op.split(".")[0]
    if base in ("DADD", "DMUL", "DFMA", "DSETP", "DMNMX") or (base == "MUFU" and "64" in op):
        return "fp64"
    if base in ("FADD", "FMUL", "FFMA", "FSETP", "FMNMX", "MUFU", "FSEL", "FCHK"):
        return "fp32"
    if base in ("IADD3", "IMAD", "LOP3", "SHF", "ISETP", "IMNMX", "LEA", "SEL", "MOV", "IABS", "PRMT", "VIMNMX"):
        return "int"
    if base in ("BRA", "BSYNC", "BSSY", "EXIT", "PLOP3", "WARPSYNC", "CALL", "RET", "NOP", "P2R", "R2P"):
        return "control"
    if base.startswith("LD") or base.startswith("ST") or base in ("ATOM", "RED", "ATOMS"):
        return "memory"
    return "other"


kinds = collections.Counter(kind(op) for op in body)
ops = collections.Counter(op for op in body)
print("%s: loop of %d instructions: %s" % (label, len(body), ", ".join("%s %d" % kv for kv in sorted(kinds.items()))))
print("  " + ", ".join("%s %d" % kv for kv in ops.most_common(24)))
