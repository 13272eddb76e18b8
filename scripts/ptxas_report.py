#!/usr/bin/env python3
"""Condenses ptxas's --resource-usage report (stdin) into one line per kernel: registers,
stack frame, spill stores/loads and the kernel's template arguments (demangled).
Usage: nvcc ... --resource-usage 2>&1 | scripts/ptxas_report.py [FILTER]"""
import re
import subprocess
import sys

flt = sys.argv[1] if len(sys.argv) > 1 else ""
entry, props, info = None, None, {}
for line in sys.stdin.read().splitlines():
    m = re.search(r"Compiling entry function '([^']+)'", line)
    if m:
        entry = m.group(1)
        info.setdefault(entry, {})
        continue
    m = re.search(r"Function properties for (\S+)", line)
    if m:
        props = m.group(1)
        continue
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m and props in info:
        info[props].update(stack=m.group(1), stores=m.group(2), loads=m.group(3))
        continue
    m = re.search(r"Used (\d+) registers", line)
    if m and entry:
        info[entry]["regs"] = m.group(1)
names = list(info)
pretty = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.splitlines()
for raw, name in zip(names, pretty):
    if flt not in name:
        continue
    d = info[raw]
    # "void chens::cuda::kernel<args>(params)" -> "kernel<args>": the parameter list is the
    # first "(" outside the template arguments (which may hold casts such as "(LeanPolicy)1").
    depth, cut = 0, len(name)
    for at, ch in enumerate(name):
        depth += {"<": 1, ">": -1}.get(ch, 0)
        if ch == "(" and depth == 0:
            cut = at
            break
    short = re.sub(r"chens::|cuda::", "", re.sub(r"^void ", "", name[:cut]))
    print("%4s regs %6s B stack %5s/%-5s B spill st/ld  %s" % (
        d.get("regs", "?"), d.get("stack", "?"), d.get("stores", "?"), d.get("loads", "?"), short[:160]))
