#pragma once
// llama2.c checkpoint (+ its tokenizer.bin) -> GGUF, laid out as llama.cpp's
// convert-llama2c-to-ggml lays it out, so the result matches files people already have.
#include <string>

namespace pocket::tools {

struct Llama2cConvertOptions {
    std::string checkpoint;   // model.bin (llama2.c "legacy" v0 export)
    std::string tokenizer;    // tokenizer.bin (llama2.c format: scores + pieces)
    std::string output;       // out.gguf
    std::string name;         // general.name; default: checkpoint file stem
    bool tied = false;        // omit output.weight (the model then ties it to token_embd)
    float rope_freq_base = 10000.0f;
    float rms_eps = 1e-5f;
};

void convert_llama2c(const Llama2cConvertOptions& options);

}  // namespace pocket::tools
