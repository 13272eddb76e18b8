#!/usr/bin/env bash
# Installs the Debian packages chens needs to build and test, if any is missing.
# Run as root on a fresh Debian 12 machine; a machine that has them all is left alone.
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache                # build (ccache: a compiler cache, docs/performance.md "Build time")
  libgtest-dev libbenchmark-dev               # tests, benchmarks
  libeigen3-dev                               # dense reference implementation (tests)
  libtomlplusplus-dev nlohmann-json3-dev      # study files, summary.json
  libcli11-dev                                # command-line options (chens run, check, validate)
  librandom123-dev                            # counter-based RNG for perturbations
  libboost-dev                                # Boost.Odeint, the benchmark's peer
  python3-matplotlib python3-numpy            # chens plot (scripts/plot_study.py) and its test
  pybind11-dev python3-dev                    # the Python package chens (python/, docs/python.md)
  python3-pytest python3-xarray               # its tests, and Result.dataset()
  python3-scipy                               # scripts/plot_penalty_limits.py (003 limits) and its test
  libhdf5-dev python3-h5py python3-pandas     # states.h5 (HDF5 C++ API) and its read-back test
  libopenmpi-dev openmpi-bin                  # sharding over MPI ranks (docs/scaling.md) and its test
  procps                                      # pgrep: the MPI checkpoint test signals one rank (tests/mpi)
  clang libclang-rt-14-dev cppcheck           # scripts/fuzz-study.sh (libFuzzer), scripts/static-analysis.sh
  clang-format                                # scripts/format.sh (.clang-format; its check in static-analysis.sh)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "chens bootstrap: missing Debian packages: ${missing[*]}" >&2
  echo "chens bootstrap: run this script as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "chens bootstrap: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || echo "chens bootstrap: apt-get update failed; trying the cached package lists" >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}"
