#!/usr/bin/env python3
"""Prints the model-class lists of src/engine/model_classes.cc from the engines' own files.

Usage: engine_model_classes.py atom  model_runner.py       (ROCm/ATOM atom/model_engine/)
       engine_model_classes.py trtllm supported-models.md  (NVIDIA/TensorRT-LLM, the documentation folder source/models/)

atom:   the keys of `support_model_arch_dict = {...}` (the classes ATOM's model runner loads; any
        other `architectures[0]` is refused at load).
trtllm: the back-quoted first column of every table row of the page's "Supported Models" and
        "Multimodal Feature Support Matrix" tables (the PyTorch backend's list; the AutoDeploy
        backend may run other Hugging Face classes, so this list is a hint, not a rule).

The committed lists were made by reading those files with the search tool at the commits named in
model_classes.cc and applying these rules; run this on a checkout of the same commits to compare.
"""
import re
import sys


def atom(text):
    body = re.search(r"support_model_arch_dict\s*=\s*\{(.*?)\n\}", text, re.S)
    if not body:
        sys.exit("no support_model_arch_dict in the file")
    return re.findall(r'^\s*"([A-Za-z0-9_]+)"\s*:', body.group(1), re.M)


def trtllm(text):
    out = []
    in_table = False
    for line in text.splitlines():
        if line.startswith("# "):  # top-level sections only (Visual Generation has its own
            in_table = line.startswith(("# Supported Models",  # "## Supported Models" of ids)
                                        "# Multimodal Feature Support Matrix"))
            continue
        if in_table and line.startswith("| `"):
            name = re.match(r"\| `([A-Za-z0-9_]+)", line)
            if name:
                out.append(name.group(1))
    return out


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("atom", "trtllm"):
        sys.exit(__doc__)
    text = open(sys.argv[2], encoding="utf-8").read()
    names = atom(text) if sys.argv[1] == "atom" else trtllm(text)
    seen = []
    for n in names:
        if n not in seen:
            seen.append(n)
    for n in sorted(seen):
        print(f'    "{n}",')


if __name__ == "__main__":
    main()
