#!/usr/bin/env bash
# Builds pocket with the CUDA backend here (nvcc compiles; no GPU needed) and packs what
# bench/cuda/device_check.sh runs on a GPU machine into .cuda-carry/bundle.tar.xz: the test
# and tool binaries (stripped), the shared libraries they link that a bare machine lacks,
# and the part of ../shared the GPU tests read (what fits the 64 MiB a device call carries:
# the f32 gemma, phi3 and llama3rope models stay behind; device_check.sh skips their cases).
#   bash bench/cuda/make_bundle.sh        (POCKET_CUDA_ARCHS=90 by default: an H100/H200)
set -euo pipefail
cd "$(dirname "$0")/../.."
SHARED=${POCKET_SHARED:-../shared}
cmake -S . -B build-cuda -DCMAKE_BUILD_TYPE=Release -DPOCKET_CUDA=ON -DPOCKET_CUDA_ARCHS="${POCKET_CUDA_ARCHS:-90}" \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build build-cuda -j"$(nproc)" --target test_backend model_tests tools_tests run perplexity bench gguf quantize
rm -rf .cuda-bundle .cuda-carry
mkdir -p .cuda-bundle/bin .cuda-bundle/lib .cuda-bundle/shared/reference .cuda-bundle/shared/vocab .cuda-carry
for b in run perplexity bench gguf quantize; do cp build-cuda/bin/$b .cuda-bundle/bin/; done
for t in tests/backend/test_backend tests/model/model_tests tests/tools/tools_tests; do cp build-cuda/$t .cuda-bundle/bin/; done
strip .cuda-bundle/bin/*
pwd -P > .cuda-bundle/source_dir   # where the tests will look for the sources
# Libraries from Debian packages that a CUDA image (Ubuntu) may not have.
ldd .cuda-bundle/bin/* | awk '/=> \// {print $3}' | sort -u | grep -E 'fmt|spdlog|xxhash|pcre2|utf8proc|readline|gtest|gmock|httplib|tinfo|vulkan' |
  xargs -r -I{} cp -L {} .cuda-bundle/lib/
cp -r "$SHARED"/reference/{manifest.json,MANIFEST.md,a_stories260K,b_quant,c_arch,d_perplexity,g_arch2,tokens} .cuda-bundle/shared/reference/
mkdir -p .cuda-bundle/shared/reference/models
find "$SHARED"/reference/models -name "*.gguf" -size -4000k -exec cp {} .cuda-bundle/shared/reference/models/ \;
cp "$SHARED"/reference/models/rand-{llama,qwen2}-f32.gguf .cuda-bundle/shared/reference/models/
mkdir -p .cuda-bundle/shared/text
cp "$SHARED"/text/mini_story.txt .cuda-bundle/shared/text/
cp -r "$SHARED"/gguf .cuda-bundle/shared/
cp "$SHARED"/vocab/ggml-vocab-llama-spm.gguf .cuda-bundle/shared/vocab/
tar -cf - .cuda-bundle | xz -T2 -6 > .cuda-carry/bundle.tar.xz
du -sh .cuda-bundle .cuda-carry/bundle.tar.xz
