#!/usr/bin/env python3
"""Lists the flag names (and fixed choices) an engine's source file defines, one per line, in the
format of the fixtures next to this script ("--flag [value ...]").

Usage: extract_flags.py MODE FILE
  sglang-doc      SGLang's docs/advanced_features/server_arguments.md: every `--name` of a table
                  row's Argument column (aliases after <br> too) and the back-quoted values of its
                  Options column when they are values, not "Type: ..."
  argparse        add_argument("--name", ...) / flag_name="--name" calls; choices=[...] literals
  vllm-argparse   like argparse (vLLM's EngineArgs.add_cli_args and the frontend's fields)
  click           @click.option("--name", "--alias", ...) decorators; click.Choice([...]) literals

The fixtures were made by reading the files named in their headers with the search tool and
applying these rules; run this on a checkout of the same commit to regenerate or compare them.
Values computed at run time (a registry's keys, a Literal type defined elsewhere) are not in the
file and are left out: the test then checks the name only.
"""
import re
import sys


def sglang_doc(text):
    out = []
    for line in text.splitlines():
        if not line.startswith("| `--"):
            continue
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        names = re.findall(r"`(--[A-Za-z0-9_-]+)`", cols[0])
        options = cols[-1]
        values = [] if options.startswith(("Type:", "bool", "Bool", "List", "Same", "N/A", "Optional")) \
            else re.findall(r"`([^`]+)`", options)
        for n in names:
            out.append(" ".join([n] + values))
    return out


def argparse_calls(text):
    out = []
    for m in re.finditer(r"(?:add_argument\(|flag_name=)\s*((?:\s*f?[\"']-[^\"']+[\"']\s*,?)+)(.*?)\)",
                         text, re.S):
        names = [n for n in re.findall(r"[\"'](--[A-Za-z0-9_{}-]+)[\"']", m.group(1))]
        choices = re.search(r"choices=\[([^\]]*)\]", m.group(2))
        values = re.findall(r"[\"']([^\"']+)[\"']", choices.group(1)) if choices else []
        for n in names:
            out.append(" ".join([n] + values))
    return out


def click_options(text):
    out = []
    for m in re.finditer(r"@click\.option\(\s*((?:[\"'][^\"']+[\"']\s*,\s*)+)(.*?)\)\n", text, re.S):
        names = [n for n in re.findall(r"[\"'](--[A-Za-z0-9_-]+)[\"']", m.group(1))]
        choices = re.search(r"Choice(?:WithAlias)?\(\s*\[([^\]]*)\]", m.group(2))
        values = re.findall(r"[\"']([^\"']+)[\"']", choices.group(1)) if choices else []
        for n in names:
            out.append(" ".join([n] + values))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    mode, path = sys.argv[1], sys.argv[2]
    text = open(path, encoding="utf-8").read()
    rules = {"sglang-doc": sglang_doc, "argparse": argparse_calls, "vllm-argparse": argparse_calls,
             "click": click_options}
    if mode not in rules:
        sys.exit(f"unknown mode {mode}: one of {', '.join(rules)}")
    seen = set()
    for line in rules[mode](text):
        if line.split()[0] not in seen:
            seen.add(line.split()[0])
            print(line)


if __name__ == "__main__":
    main()
