#!/usr/bin/env bash
# The CUDA backend's check on a machine with an NVIDIA GPU, as one script (device time is
# scarce). It runs a bundle made here by bench/cuda/make_bundle.sh (binaries built with
# -DPOCKET_CUDA=ON, the libraries they link, the ../shared data the GPU tests read), so the
# GPU machine needs only its driver. Writes its logs to $OUT (default /tmp/cuda-check).
#   bash bench/cuda/device_check.sh [quick]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/cuda-check}
mkdir -p "$OUT"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }

[ -d .cuda-bundle/bin ] || tar -xJf .cuda-carry/bundle.tar.xz
# The tests find the sources by the path they were built at (make_bundle.sh wrote it down):
# link that path to this checkout when it is elsewhere here.
built_at=$(cat .cuda-bundle/source_dir)
if [ "$(pwd -P)" != "$built_at" ] && [ ! -e "$built_at" ]; then mkdir -p "$(dirname "$built_at")" && ln -s "$(pwd -P)" "$built_at"; fi
cd "$built_at"
export LD_LIBRARY_PATH=$PWD/.cuda-bundle/lib POCKET_SHARED=$PWD/.cuda-bundle/shared POCKET_VULKAN=0
B=.cuda-bundle/bin
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv | tee -a "$OUT/summary.txt"
$B/run --list-devices 2>&1 | tee -a "$OUT/summary.txt"

gtest() {   # name binary filter seconds
    log "$1"
    timeout "$4" "$B/$2" --gtest_filter="$3" --gtest_brief=1 >"$OUT/$1.txt" 2>&1
    echo "exit $?" >>"$OUT/$1.txt"
    grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|tests? ran|exit " "$OUT/$1.txt" | tail -25 | tee -a "$OUT/summary.txt"
}
gtest harness test_backend 'Ops/OpHarness.*:OpHarnessBits.*:CudaDevice.*' 100 &
gtest logits model_tests '*MatchLlamaCpp/*_ngl*:*OnTheGpu*:-*rand_gemma_f32*:*llama3rope*:*phi3*' 150 &
gtest perplexity tools_tests 'Perplexity.MatchesLlamaPerplexityOnTheGpu' 150 &
wait
[ "${1:-}" = quick ] && exit 0

log "bench: 1B (TinyLlama shape) synthetic, -ngl 99"
$B/gguf synth --preset tinyllama-1.1b --vocab "$POCKET_SHARED/vocab/ggml-vocab-llama-spm.gguf" -o /tmp/tl-f16.gguf >/dev/null 2>&1
for t in ${BENCH_TYPES:-Q4_0 Q4_K_M}; do $B/quantize /tmp/tl-f16.gguf /tmp/tl-$t.gguf $t 16 >/dev/null 2>&1; done
for t in f16 ${BENCH_TYPES:-Q4_0 Q4_K_M}; do
    timeout 45 $B/bench -m /tmp/tl-$t.gguf -ngl 99 -p 512 -n 128 -r 3 2>&1 | tee -a "$OUT/summary.txt"
done
log "tg128, Q4_0: graphs replayed (POCKET_CUDA_STATS=1), then without graphs (POCKET_CUDA_GRAPHS=0)"
POCKET_CUDA_STATS=1 timeout 45 $B/bench -m /tmp/tl-Q4_0.gguf -ngl 99 -p 0 -n 128 -r 2 2>&1 | grep -E "runs:|tg128" | tee -a "$OUT/summary.txt"
POCKET_CUDA_GRAPHS=0 timeout 45 $B/bench -m /tmp/tl-Q4_0.gguf -ngl 99 -p 0 -n 128 -r 2 2>&1 | grep -E "tg128" | tee -a "$OUT/summary.txt"
log "kernel time by op (POCKET_CUDA_PROFILE=1), Q4_0: pp512, then tg128"
POCKET_CUDA_PROFILE=1 timeout 45 $B/bench -m /tmp/tl-Q4_0.gguf -ngl 99 -p 512 -n 0 -r 1 2>&1 | grep -A 30 "kernel time" | tee -a "$OUT/summary.txt"
POCKET_CUDA_PROFILE=1 timeout 45 $B/bench -m /tmp/tl-Q4_0.gguf -ngl 99 -p 0 -n 128 -r 1 2>&1 | grep -A 30 "kernel time" | tee -a "$OUT/summary.txt"
