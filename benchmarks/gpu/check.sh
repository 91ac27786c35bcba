#!/usr/bin/env bash
# The GPU check of issue 24 (benchmarks/gpu/README.md: the device-tool calls, sizes, what each step shows).
# On the device machine, two calls back to back (it is given back after 30 s idle, and with it the state folder):
#   bash benchmarks/gpu/check.sh call1            # carry .gpu/call1: unpack; versions; requirements; expert episode
#   bash benchmarks/gpu/check.sh call2 [SECONDS]  # carry .gpu/call2: join the model; the figures within SECONDS (480)
# Here, on CPU with the project's .venv and the smallest sizes, the same steps but the unpacking:
#   nice -n 19 bash benchmarks/gpu/check.sh local [SECONDS]
set -uo pipefail
cd "$(dirname "$0")/../.."
stage=${1:?usage: check.sh call1|call2|local [SECONDS]}
deadline=$((SECONDS + ${2:-480}))
state=${AOI_GPU_STATE:-/tmp/aoi-gpu$([[ $stage == local ]] && echo -local)}
out=${OUT:-$state/out}
key=k8s_target_port-misconfig-localization-1@user-service  # a held-out target of benchmarks/learning.py (seed 0)
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 COLUMNS=160
if [[ $stage == local ]]; then
  py=.venv/bin/python device=cpu learning=--tiny capped=0  # steps share the budget: this CPU's speed varies
  bench=(--decisions 1 --max-tokens 48 --concurrency 1,2 --problems k8s_target_port-misconfig-detection-1)
  turns=(2 10)  # Observer decisions, environment actions
else
  py=python3 device=cuda learning=--quick capped=1
  bench=(--decisions 4)
  turns=(10 30)  # benchmarks/learning.py's default size
  export PYTHONPATH=$PWD/src:$state/site PATH=$state/bin:$PATH AOI_CACHE=$state/cache
  $py benchmarks/gpu/bundle.py unpack ".gpu/$stage" --state "$state" || exit 1
fi
mkdir -p "$out"
exec 3>&1  # the steps' headers, wherever their command's output goes

left() { echo $((deadline - SECONDS)); }

step() {  # NAME CAP COMMAND...: run COMMAND for at most CAP seconds (less when the deadline is nearer)
  local name=$1 cap=$2 started=$SECONDS rc limit
  shift 2
  (( capped )) || cap=$(left)
  limit=$(( cap < $(left) ? cap : $(left) ))
  if (( limit < 30 )); then echo "== $name: skipped, $limit s left" >&3; return 1; fi
  echo "== $name (at most $limit s)" >&3
  timeout -k 10 "$limit" "$@"
  rc=$?
  echo "== $name: exit $rc after $((SECONDS - started)) s" >&3
  return $rc
}

versions() {
  echo "== device and versions"
  nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"
  echo "kubectl: $(command -v kubectl) $(kubectl version --client | grep -m1 Client)"
  $py - <<'PYTHON'
import importlib.metadata as metadata, platform, sys
import torch
print(f"python {platform.python_version()} ({sys.executable}); torch {torch.__version__}, CUDA {torch.version.cuda}, "
      f"GPU: {torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'none'}")
found = []
for name in ("transformers", "peft", "accelerate", "trl", "datasets", "gguf", "lm-format-enforcer", "kubernetes"):
    try:
        found.append(f"{name} {metadata.version(name)}")
    except metadata.PackageNotFoundError:
        found.append(f"{name} MISSING")
print("; ".join(found))
PYTHON
}

episode() {  # NAME RUN MORE...: one `aoi eval` episode on the held-out key into RUN; print its results line
  local name=$1 run=$2
  shift 2
  rm -rf "$run"
  step "$name" 240 $py -m aoi eval --keys "$key" --out "$run" --seed 0 "$@" >"$run.log" 2>&1 || tail -20 "$run.log"
  [[ -s $run/results.jsonl ]] || { echo "no result: see $run.log"; return; }
  $py - "$run/results.jsonl" <<'PYTHON'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
print(f"{r['problem_id']}@{r['target']}: success {r['success']}, {r['seconds']:.1f} s in the episode, "
      f"{r['replies'].get('observer', {}).get('replies')} Observer decisions, {r['steps']} actions")
PYTHON
}

call1() {
  $py benchmarks/gpu/requirements.py --installed --site "$state/site"
  episode "expert episode (twin, kubectl)" "$state/expert" --model expert
}

figures() {
  step "local_model.py on $device" 240 $py benchmarks/local_model.py --device "$device" --engines bf16,fp32 \
    "${bench[@]}" | tee "$out/local_model.md"
  printf 'model: expert\nmodels: {observer: {spec: "local:smollm2+max_new_tokens=256+threads=1+device=%s"}}\n' \
    "$device" >"$state/heldout.yaml"
  printf 'env: {max_steps: %s}\nagent: {max_iterations: %s}\n' "${turns[1]}" "${turns[0]}" >>"$state/heldout.yaml"
  episode "held-out local-Observer episode on $device" "$state/heldout" --config "$state/heldout.yaml"
  cp "$state/heldout/results.jsonl" "$out/heldout.jsonl" 2>/dev/null
  if ! command -v git >/dev/null; then echo "== learning.py: skipped, it needs git"; return; fi
  step "learning.py $learning on $device" "$(left)" $py benchmarks/learning.py $learning --device "$device" \
    --work "$state/learning" --results "$out/learning-${learning#--}-$device.json" >"$state/learning.log" 2>&1 \
    || tail -5 "$state/learning.log"
  grep -E "^(phase|learning benchmark)" "$state/learning.log"
}

versions
case $stage in
  call1) call1 ;;
  call2) figures ;;
  local) call1; figures ;;
  *) echo "usage: check.sh call1|call2|local [SECONDS]"; exit 2 ;;
esac
echo "== done, $(left) s of the budget left; files in $out"
