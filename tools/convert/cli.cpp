// `convert`: turn a llama2.c checkpoint and tokenizer into GGUF. Argument parsing only.
#include "../common/command_line.hpp"
#include "llama2c.hpp"
#include "pocket/error.hpp"
#include "pocket/output_file.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
    CLI::App app{"convert: llama2.c checkpoint + tokenizer.bin -> GGUF (f32)"};
    pocket::tools::Llama2cConvertOptions o;
    app.add_option("checkpoint", o.checkpoint, "llama2.c model file (e.g. stories260K.bin)")->required()->check(CLI::ExistingFile);
    app.add_option("-z,--tokenizer", o.tokenizer, "llama2.c tokenizer file (e.g. tok512.bin)")->required()->check(CLI::ExistingFile);
    app.add_option("-o,--output", o.output, "output GGUF file")->required();
    app.add_option("--name", o.name, "general.name (default: the checkpoint's file name)");
    app.add_flag("--tied", o.tied, "omit output.weight: the model ties it to token_embd");
    pocket::tools::CommandLine cl("convert", argc, argv);
    if (auto rc = cl.parse(app)) return *rc;
    try {
        pocket::remove_temporaries_on_signals();
        pocket::tools::convert_llama2c(o);
    } catch (const pocket::Error& e) {
        std::cerr << "convert: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
