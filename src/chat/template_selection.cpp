// Which template a model gets: --chat-template (a built-in name or a file), else the GGUF's
// tokenizer.chat_template, else a built-in guessed from the vocabulary's special tokens.
#include "pocket/chat_template.hpp"
#include "pocket/error.hpp"
#include "pocket/gguf.hpp"
#include "pocket/vocab.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace pocket {

static std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string guess_builtin_template(const Vocab& vocab) {
    auto has = [&](std::string_view t) { return vocab.find(t) != kNoToken; };
    if (has("<|im_start|>")) return "chatml";
    if (has("<|start_header_id|>")) return "llama3";
    if (has("<start_of_turn>")) return "gemma";
    if (has("<|user|>") && has("<|end|>")) return "phi3";
    std::string name = lower(vocab.name());
    if (has("[INST]")) return "mistral";
    // Llama 2 and Mistral v0.1 share the SentencePiece vocabulary with no [INST] token: only
    // the model name tells them apart.
    if (name.find("mistral") != std::string::npos || name.find("mixtral") != std::string::npos) return "mistral";
    if (name.find("llama-2") != std::string::npos || name.find("llama2") != std::string::npos ||
        name.find("llama 2") != std::string::npos)
        return "llama2";
    if (name.find("zephyr") != std::string::npos) return "zephyr";
    if (name.find("vicuna") != std::string::npos) return "vicuna";
    return "chatml";
}

ChatTemplate chat_template_for(const GgufFile& file, const Vocab& vocab, std::string_view override_name_or_file) {
    if (!override_name_or_file.empty()) {
        if (auto src = builtin_chat_template(override_name_or_file)) return ChatTemplate::parse(*src);
        std::ifstream in{std::string(override_name_or_file), std::ios::binary};
        if (!in) {
            std::string names;
            for (const auto& n : builtin_chat_template_names()) names += (names.empty() ? "" : ", ") + n;
            throw Error("--chat-template {}: neither a built-in template ({}) nor a readable file", override_name_or_file,
                        names);
        }
        std::stringstream ss;
        ss << in.rdbuf();
        try {
            return ChatTemplate::parse(ss.str());
        } catch (const Error& e) {
            throw Error("{}: {}", override_name_or_file, e.what());
        }
    }
    if (const GgufValue* v = file.find("tokenizer.chat_template"); v && v->type == GgufType::STRING && !v->as_string().empty()) {
        try {
            return ChatTemplate::parse(v->as_string());
        } catch (const Error& e) {
            throw Error("{}: tokenizer.chat_template: {} (use --chat-template to choose another)", file.path(), e.what());
        }
    }
    return ChatTemplate::parse(*builtin_chat_template(guess_builtin_template(vocab)));
}

}  // namespace pocket
