"""pip install ./python: builds the extension module l2s._l2s with CMake (the repository's own
build, target _l2s, in <repo>/build-python) against Debian's pybind11 headers; no downloads.

    /usr/bin/python3 -m pip install --no-build-isolation ./python

(--no-build-isolation: setuptools comes from Debian's python3-setuptools, not from PyPI.)
"""

import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def project_version():
    """The version in the repository's CMakeLists.txt project() line: one place for it."""
    with open(os.path.join(REPO, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(l2s VERSION ([0-9.]+)", f.read())
    if not m:
        raise RuntimeError("no `project(l2s VERSION x.y.z` line in CMakeLists.txt")
    return m.group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.environ.get("L2S_PYTHON_BUILD_DIR", os.path.join(REPO, "build-python"))
        cfg = ["cmake", "-S", REPO, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
               "-DL2S_BUILD_PYTHON=ON", "-DL2S_BUILD_TESTS=OFF", "-DL2S_BUILD_BENCH=OFF",
               f"-DPYTHON_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja"):
            cfg += ["-G", "Ninja"]
        if shutil.which("ccache"):
            cfg += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
        subprocess.check_call(cfg)
        subprocess.check_call(["cmake", "--build", build, "--target", "_l2s", "-j",
                               str(os.cpu_count() or 1)])
        built = [f for f in os.listdir(os.path.join(build, "python", "l2s")) if f.startswith("_l2s")
                 and f.endswith(".so")]
        if len(built) != 1:
            raise RuntimeError(f"expected one _l2s*.so in {build}/python/l2s, found {built}")
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(os.path.join(build, "python", "l2s", built[0]), dest)


setup(
    name="l2s",
    version=project_version(),
    description="Plan how to shard an LLM across a GPU cluster for inference (l2s, in-process)",
    packages=["l2s"],
    ext_modules=[Extension("l2s._l2s", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    zip_safe=False,
)
