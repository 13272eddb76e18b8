#!/usr/bin/env bash
# Prepares, on the development machine, what a GPU machine without apt or network needs
# to run every test, `chens validate` on the examples and the GPU benchmarks in one call
# (docs/gpu.md): the release binaries built here with nvcc, plus the shared libraries
# from Debian that the GPU machine lacks, in .devrun/ (git-ignored). Then, there:
#   bash scripts/gpu-run.sh        (with .devrun carried along)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
[[ -x $build/tests/chens_gpu_tests ]] || { echo "gpu-bundle: build first: cmake --preset release && cmake --build --preset release" >&2; exit 2; }
# A fresh, git-ignored bundle folder $1.
fresh() {
  grep -qx "/$1/" .git/info/exclude 2>/dev/null || echo "/$1/" >> .git/info/exclude
  rm -rf "$1" && mkdir -p "$1"
}
# Shared libraries from Debian packages that a bare CUDA machine does not have: every
# library the binaries in $1 load (HDF5, Open MPI, toml++, Google Benchmark and theirs) but
# the C and C++ runtimes and CUDA's own, which the machine has. gpu-run.sh puts them on
# LD_LIBRARY_PATH for chens's binaries only (bin/chens, a wrapper), never for its Python.
copy_libraries() {
  for b in "$1"/*; do ldd "$b" | awk '/=> \// {print $3}'; done | sort -u |
    grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|libstdc\+\+|libgcc_s|libcudart)\.so' |
    while read -r lib; do cp -L "$lib" "$1"/; done
}
# Every binary embeds the same CUDA kernels (~90 MB each since the chains' thread groups):
# one xz stream with a dictionary larger than a binary stores them about once, so the bundle
# (437 MB) packs into about 42 MB and fits the device tool's 64 MiB transfer limit. (-T0
# would cut the stream into blocks that cannot see each other: 94 MB.) About 4 min here.
pack() {
  (cd "$1" && tar cf - ./* | xz -T1 --lzma2=preset=6,dict=1024MiB > bundle.tar.xz && find . -type f ! -name bundle.tar.xz -delete)
  du -sh "$1"
}
fresh .devrun
cp $build/chens $build/tests/chens_gpu_tests $build/bench/bench_gpu_instances .devrun/
[[ -f $build/bench/bench_chain_group ]] && cp $build/bench/bench_chain_group .devrun/
# GPU_ONLY=1 leaves the CPU suites out (each binary carries its own copy of the kernels, and
# the device tool carries 64 MiB in all): run them on the development machine instead.
[[ ${GPU_ONLY:-0} == 1 ]] || cp $build/tests/chens_tests $build/tests/papers/chens_paper_tests .devrun/
copy_libraries .devrun
# Open MPI's runtime (mpiexec, orted, its plugins and help texts, PMIx, and the libraries
# they load), as Debian installs it: gpu-run.sh unpacks it into / without replacing any file
# there, for the MPI-with-a-GPU-per-rank test.
if command -v mpiexec > /dev/null; then
  for p in openmpi-bin openmpi-common libopenmpi3 libpmix2 libfabric1 libucx0 libhwloc15 libevent-core-2.1-7 \
           libevent-pthreads-2.1-7 libibverbs1 ibverbs-providers librdmacm1 libpsm2-2 libpsm-infinipath1 libnl-3-200 \
           libnl-route-3-200 libmunge2 libnuma1 libatomic1 libbsd0 libmd0 libx11-6 libxau6 libxdmcp6 libxext6 libxcb1; do
    dpkg -L "$p" 2> /dev/null | while read -r f; do [[ -f $f || -L $f ]] && echo "$f"; done
  done | sort -u > .devrun/openmpi.files
  tar cf .devrun/openmpi.tar -T .devrun/openmpi.files 2> /dev/null
  rm .devrun/openmpi.files
fi
strip .devrun/chens .devrun/chens_gpu_tests .devrun/bench_gpu_instances
[[ -f .devrun/bench_chain_group ]] && strip .devrun/bench_chain_group
[[ -f .devrun/chens_tests ]] && strip .devrun/chens_tests .devrun/chens_paper_tests
# chens for scripts and Python tests: the binary with its libraries, the caller's environment untouched.
mkdir -p .devrun/bin
printf '%s\n' '#!/bin/sh' 'd=$(dirname "$(readlink -f "$0")")/..' \
  'LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$d/chens" "$@"' > .devrun/bin/chens
chmod +x .devrun/bin/chens
# Random123's headers: the GPU's systems compiled on first use include them (gpu-run.sh installs
# them where the machine lacks them).
cp -r /usr/include/Random123 .devrun/
pack .devrun
# BASE_BUILD=DIR: also the GPU benchmark of another build (an earlier commit's) in .devrun-base/,
# which gpu-run.sh runs beside this one for before/after ratios on the same card.
if [[ -n ${BASE_BUILD:-} ]]; then
  fresh .devrun-base
  cp "$BASE_BUILD/bench/bench_gpu_instances" .devrun-base/
  copy_libraries .devrun-base
  strip .devrun-base/bench_gpu_instances
  pack .devrun-base
fi
