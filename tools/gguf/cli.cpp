// `gguf`: inspect GGUF files. Argument parsing only; the commands live in info.cpp and hash.cpp.
#include "../common/command_line.hpp"
#include "gguf_commands.hpp"
#include "synth.hpp"
#include "pocket/error.hpp"
#include "pocket/output_file.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
    CLI::App app{"gguf: inspect GGUF model files"};
    app.require_subcommand(1);

    std::string info_path;
    pocket::tools::InfoOptions info_options;
    bool no_mmap = false;
    auto* info = app.add_subcommand("info", "print the header, metadata and tensor table");
    info->add_option("file", info_path, "GGUF file")->required();
    info->add_flag("--json", info_options.json, "machine-readable output (the schema of shared/gguf/*.dump.json)");
    info->add_option("--preview", info_options.array_preview, "array elements shown in text mode")->capture_default_str();
    info->add_flag("--no-mmap", no_mmap, "read the file into memory instead of mapping it");

    std::string hash_path;
    auto* hash = app.add_subcommand("hash", "xxh64 of each tensor's data, in llama-gguf-hash --xxh64 format");
    hash->add_option("file", hash_path, "GGUF file")->required();
    bool xxh64 = true;
    hash->add_flag("--xxh64", xxh64, "accepted for llama-gguf-hash compatibility (the only hash)");

    pocket::tools::SynthOptions synth_options;
    auto* synth = app.add_subcommand("synth", "write a random-weight model of a realistic shape");
    synth->add_option("--preset", synth_options.preset, "llama-3.2-1b, tinyllama-1.1b, llama-7b, qwen2-0.5b, qwen3-0.6b, qwen3moe-small, gemma3-1b or tiny")
        ->capture_default_str();
    synth->add_option("-o,--output", synth_options.output, "output GGUF")->required();
    synth->add_option("--vocab", synth_options.vocab, "copy tokenizer.* from this GGUF (e.g. shared/vocab/ggml-vocab-llama3.gguf)");
    synth->add_option("--type", synth_options.type, "matrix type: f32, f16 or bf16")->capture_default_str();
    synth->add_option("--seed", synth_options.seed, "random seed")->capture_default_str();
    synth->add_option("--layers", synth_options.n_layer, "override the preset's layer count");

    pocket::tools::CommandLine cl("gguf", argc, argv);
    if (auto rc = cl.parse(app)) return *rc;
    try {
        pocket::GgufOpenOptions open_options;
        open_options.use_mmap = !no_mmap;
        if (*info) {
            pocket::tools::gguf_info(pocket::GgufFile::open(info_path, open_options), info_options, std::cout);
        } else if (*synth) {
            pocket::remove_temporaries_on_signals();
            const uint64_t n = pocket::tools::synth_model(synth_options);
            std::cerr << "gguf synth: wrote " << synth_options.output << " (" << n << " parameters)\n";
        } else if (*hash) {
            pocket::tools::gguf_hash(pocket::GgufFile::open(hash_path), hash_path, std::cout);
        }
    } catch (const pocket::Error& e) {
        std::cerr << "gguf: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
