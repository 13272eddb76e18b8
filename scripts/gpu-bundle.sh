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
grep -qx '/.devrun/' .git/info/exclude 2>/dev/null || echo '/.devrun/' >> .git/info/exclude
rm -rf .devrun && mkdir -p .devrun
cp $build/chens $build/tests/chens_tests $build/tests/papers/chens_paper_tests $build/tests/chens_gpu_tests \
   $build/bench/bench_gpu_instances .devrun/
# Shared libraries from Debian packages that a bare CUDA machine does not have.
for lib in libtomlplusplus.so.3 libbenchmark.so.1debian; do
  cp -L "$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}')" .devrun/
done
strip .devrun/chens .devrun/chens_tests .devrun/chens_paper_tests .devrun/chens_gpu_tests .devrun/bench_gpu_instances
# Every binary embeds the CUDA kernels (~27 MB each): compressed, the bundle fits the
# device tool's 64 MiB transfer limit.
(cd .devrun && tar cf - ./* | xz -T0 -6 > bundle.tar.xz && find . -type f ! -name bundle.tar.xz -delete)
du -sh .devrun
