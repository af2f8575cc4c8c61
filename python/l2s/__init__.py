"""l2s: plan how to shard an LLM across a GPU cluster for inference, from Python.

Every function runs the l2s command line in this process (the same C++ code as the binary) with
the keyword arguments as flags and ``--json`` added, and returns the parsed JSON as a `Result`:

    >>> import l2s
    >>> r = l2s.plan(model="llama-3.1-8b", gpus=8, budget=200)
    >>> r.best.tokens_per_s_per_gpu, r.best.strategy

Keyword arguments map to flags: ``gpus=8`` -> ``--gpus 8``; underscores become dashes
(``oracle_calls=0`` -> ``--oracle-calls 0``); ``True`` -> the bare flag, ``False``/``None`` -> left
out; a dict -> ``k=v,k=v`` (``slo={"ttft_ms": 2000, "tpot_ms": 50}``); a list/tuple -> its items
joined by commas. A non-zero exit raises `Error` with the CLI's one-line message and exit code
(130/143 from an interrupted search raise `Interrupted`, a KeyboardInterrupt). See docs/PYTHON.md.
"""

import json as _json
import os as _os
import re as _re

from . import _l2s

__all__ = ["__version__", "version", "Error", "Interrupted", "Result", "run", "plan", "eval", "describe", "validate", "explain", "space",
           "compare", "capacity", "sweep", "command"]


class Error(Exception):
    """A non-zero exit of the l2s command: ``message`` is its one-line error (without the
    ``l2s: error:`` prefix), ``exit_code`` its exit status (1: the request is valid but has no
    valid answer; 2: bad input), ``result`` the JSON it printed, if any (a `Result`, else None)."""

    def __init__(self, message, exit_code, result=None, stderr=""):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.result = result
        self.stderr = stderr

    def __str__(self):
        return f"{self.message} (exit {self.exit_code})"


class Interrupted(KeyboardInterrupt):
    """A search stopped by Ctrl-C/SIGTERM (exit 130/143): a KeyboardInterrupt whose ``result`` is
    the partial answer the command printed (marked ``interrupted``), if any."""

    def __init__(self, message, exit_code, result=None):
        super().__init__(message)
        self.exit_code = exit_code
        self.result = result


class Result:
    """The JSON object a command printed, with attribute access to its fields (nested objects are
    Results too, lists are lists) and ``to_dict()`` for the plain JSON value."""

    __slots__ = ("_data",)

    def __init__(self, data):
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name):
        data = object.__getattribute__(self, "_data")
        if name in data:
            return _wrap(data[name])
        raise AttributeError(f"no field '{name}' (fields: {', '.join(data)})")

    def __getitem__(self, key):
        return _wrap(self._data[key])

    def __contains__(self, key):
        return key in self._data

    def __iter__(self):
        return iter(self._data)

    def __setattr__(self, name, value):
        raise AttributeError("l2s.Result is read-only; use to_dict() for a copy")

    def __dir__(self):
        return list(self._data)

    def __eq__(self, other):
        return isinstance(other, Result) and self._data == other._data

    def keys(self):
        return self._data.keys()

    def to_dict(self):
        """A deep copy of the JSON object (dicts, lists, numbers, strings, bools, None)."""
        return _json.loads(_json.dumps(self._data))

    def __repr__(self):
        return f"l2s.Result({_json.dumps(self._data)[:200]})"


def _wrap(value):
    if isinstance(value, dict):
        return Result(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _value(v):
    if isinstance(v, dict):
        return ",".join(f"{k}={_value(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return ",".join(_value(x) for x in v)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _flags(kwargs):
    args = []
    for key, v in kwargs.items():
        if v is None or v is False:
            continue
        flag = "--" + key.replace("_", "-")
        if v is True:
            args.append(flag)
        else:
            args += [flag, _value(v)]
    return args


def run(*args):
    """Runs ``l2s ARGS...`` in this process; returns (exit_code, stdout, stderr) as text."""
    code, out, err = _l2s.run([str(a) for a in args])
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def version():
    """The build's version line without the leading ``l2s``, as ``l2s --version`` prints it:
    the project version and, for a build from a git checkout, the commit it was built from
    (e.g. ``0.1.0 (git 746f9f0)``)."""
    code, out, _ = run("--version")
    if code != 0 or not out.startswith("l2s "):
        raise Error(f"l2s --version failed (exit {code})", code)
    return out.strip()[len("l2s "):]


__version__ = version().split(" ")[0]


def _message(err, parsed):
    for line in err.splitlines():
        if line.startswith("l2s: error: "):
            return line[len("l2s: error: "):]
    if isinstance(parsed, dict) and isinstance(parsed.get("reason"), str):
        return parsed["reason"]
    lines = [ln for ln in err.splitlines() if ln.strip()]
    return lines[-1] if lines else "l2s failed without a message"


_UNKNOWN_FLAG = _re.compile(r"^unknown flag --([A-Za-z0-9_-]+) for `[^`]*`(?: \(did you mean --([A-Za-z0-9-]+)\?\))?")


_SWITCH_VALUE = _re.compile(r"^--([A-Za-z0-9-]+) takes no value, got ")
_NEEDS_VALUE = _re.compile(r"^--([A-Za-z0-9-]+) expects a value, got the flag ")


def _keyword_message(name, message, kwargs):
    """The CLI's flag errors in the keywords' words, when a keyword made that flag: an unknown
    flag, a switch given a value (``pareto=1``) or a valued flag given ``True`` (``gpus=True``)."""
    def keyword(flag):
        return next((k for k in kwargs if k.replace("_", "-") == flag), None)
    m = _SWITCH_VALUE.match(message)
    key = keyword(m.group(1)) if m else None
    if key is not None:
        return (f"{name}(): {key}={kwargs[key]!r}: --{m.group(1)} is a switch; give {key}=True "
                f"(or False to leave it out)")
    m = _NEEDS_VALUE.match(message)
    key = keyword(m.group(1)) if m else None
    if key is not None and kwargs[key] is True:
        return f"{name}(): {key}=True: --{m.group(1)} takes a value; give {key}=VALUE"
    m = _UNKNOWN_FLAG.match(message)
    if not m:
        return message
    key = next((k for k in kwargs if k.replace("_", "-") == m.group(1)), None)
    if key is None:
        return message
    hint = f" (did you mean {m.group(2).replace('-', '_')}=?)" if m.group(2) else ""
    return (f"{name}(): unknown keyword argument {key}={hint}; the keywords are the flags of "
            f"`l2s {name} --help`, with _ for -")


def command(name, **kwargs):
    """Runs ``l2s NAME --json`` with the keyword arguments as flags and returns the JSON as a
    `Result`; raises `Error` on a non-zero exit."""
    code, out, err = run(name, *_flags(kwargs), "--json")
    parsed = None
    if out.strip():
        try:
            parsed = _json.loads(out)
        except ValueError:
            parsed = None
    if code in (130, 143):
        raise Interrupted(f"l2s {name} interrupted (exit {code})", code,
                          _wrap(parsed) if isinstance(parsed, dict) else None)
    if code != 0:
        raise Error(_keyword_message(name, _message(err, parsed), kwargs), code,
                    _wrap(parsed) if isinstance(parsed, dict) else None, err)
    if parsed is None:
        raise Error(f"l2s {name} printed no JSON", 2, None, err)
    return _wrap(parsed)


def plan(**kwargs):
    """``l2s plan``: the best deployment for a model on a cluster (see `l2s plan --help`)."""
    return command("plan", **kwargs)


def eval(**kwargs):  # noqa: A001 - named as the CLI command
    """``l2s eval``: the simulated cost of one given strategy."""
    return command("eval", **kwargs)


def describe(**kwargs):
    """``l2s describe``: a model's or a cluster's figures."""
    return command("describe", **kwargs)


def validate(**kwargs):
    """``l2s validate``: the cost model against measured deployments."""
    return command("validate", **kwargs)


def explain(**kwargs):
    """``l2s explain``: one strategy's cost broken down."""
    return command("explain", **kwargs)


def space(**kwargs):
    """``l2s space``: the size of the search space."""
    return command("space", **kwargs)


def compare(**kwargs):
    """``l2s compare``: the searchers side by side."""
    return command("compare", **kwargs)


def capacity(**kwargs):
    """``l2s capacity``: a deployment under a traffic (percentiles, highest rate) or the fewest GPUs for a load."""
    return command("capacity", **kwargs)


def sweep(file, out="sweep-results", **kwargs):
    """``l2s sweep FILE``: plans every scenario of a grid file (JSON or YAML) and returns the
    rows of ``OUT/results.json`` (one `Result` per scenario, grid order), as the CLI writes them.
    ``file`` may also be the grid itself, a mapping as the file would hold it (``{"models":
    [...], "gpus": [...], ...}``): it is written to ``OUT/grid.json`` and swept from there.
    Keywords are sweep's flags (``jobs=2``, ``quiet=True``). From Python each scenario's plan runs
    in a forked child of this process; raises `Error` on a non-zero exit."""
    if isinstance(file, dict):
        _os.makedirs(out, exist_ok=True)
        path = _os.path.join(out, "grid.json")
        with open(path, "w", encoding="utf-8") as f:
            _json.dump(file, f, indent=1)
            f.write("\n")
        file = path
    code, _, err = run("sweep", file, "--out", out, *_flags(kwargs))
    if code in (130, 143):
        raise Interrupted(f"l2s sweep interrupted (exit {code})", code, None)
    if code != 0:
        raise Error(_message(err, None), code, None, err)
    with open(_os.path.join(out, "results.json"), encoding="utf-8") as f:
        return [_wrap(row) for row in _json.load(f)]
