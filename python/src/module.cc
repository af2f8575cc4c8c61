// l2s._l2s: the Python binding of the command line (src/cli/run.h). One function: run(args) ->
// (exit_code, stdout, stderr), the same code path as the l2s binary, in this process. The Python
// layer (l2s/__init__.py) turns keyword arguments into flags and parses the --json output.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <tuple>
#include <vector>

#include "cli/run.h"

namespace py = pybind11;

namespace {

std::tuple<int, py::bytes, py::bytes> Run(const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  argv.reserve(args.size() + 1);
  argv.emplace_back("l2s");
  argv.insert(argv.end(), args.begin(), args.end());
  std::string out;
  std::string err;
  int code = 0;
  {
    // The search can take seconds: let other Python threads run meanwhile.
    py::gil_scoped_release release;
    code = l2s::cli::RunCli(argv, &out, &err);
  }
  return {code, py::bytes(out), py::bytes(err)};
}

}  // namespace

PYBIND11_MODULE(_l2s, m) {
  m.doc() = "l2s command line, in-process (use the l2s package, not this module)";
  m.def("run", &Run, py::arg("args"),
        "Runs `l2s ARGS...` in this process; returns (exit_code, stdout bytes, stderr bytes).");
}
