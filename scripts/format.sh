#!/usr/bin/env bash
# The code's layout (.clang-format, clang-format 14: Debian's clang-format): formats every
# tracked C++ and CUDA source of chens in place, or with --check lists the files whose layout
# differs and exits 1 (scripts/static-analysis.sh runs the check in CI). The three hand-laid
# tables (the key table, the bad-input cases, the probed keys) and FormulationOf's one-line
# specialisations keep their layout between `// clang-format off` and `on`.
#
# Usage: scripts/format.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  *) echo "format.sh: unknown option '$1' (use --check, or nothing to format in place)" >&2; exit 2 ;;
esac
command -v clang-format >/dev/null || { echo "format.sh: clang-format is missing (apt-get install clang-format)" >&2; exit 2; }
version=$(clang-format --version | grep -o 'version [0-9]*' | grep -o '[0-9]*$')
[[ "$version" == 14 ]] || echo "format.sh: clang-format $version, while .clang-format was fitted to 14: layouts may differ" >&2
mapfile -t files < <(git ls-files '*.hpp' '*.cpp' '*.cu' '*.cuh' '*.h' | grep -E '^(include|host|kernels|tests|bench|python|examples)/')
if [[ $check -eq 0 ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format "$f" | cmp -s - "$f" || bad+=("$f")
done
if [[ ${#bad[@]} -gt 0 ]]; then
  printf 'format: %s differs from .clang-format\n' "${bad[@]}" >&2
  echo "format: ${#bad[@]} of ${#files[@]} files; scripts/format.sh formats them" >&2
  exit 1
fi
echo "format: ${#files[@]} files as .clang-format lays them out"
