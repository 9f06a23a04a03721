// The built-in templates: each renders its model family's documented format (expected strings
// written out by hand from those formats), agrees with the shared reference renderings of the
// same format, and template selection picks the right one from a GGUF's vocabulary.
#include "pocket/chat_template.hpp"
#include "pocket/error.hpp"
#include "pocket/gguf.hpp"
#include "pocket/gguf_writer.hpp"
#include "pocket/vocab.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::vector<pocket::ChatMessage> kConversation = {
    {"system", "You are terse."}, {"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Bye?"}};

std::string render_builtin(const std::string& name, bool gen, std::optional<std::string> bos, std::optional<std::string> eos,
                           const std::vector<pocket::ChatMessage>& messages = kConversation) {
    auto src = pocket::builtin_chat_template(name);
    EXPECT_TRUE(src.has_value()) << name;
    return pocket::ChatTemplate::parse(src.value_or("")).render(messages, gen, bos, eos);
}

TEST(BuiltinTemplates, NamesAreKnown) {
    for (const char* n : {"chatml", "llama2", "llama3", "mistral", "gemma", "phi3", "zephyr", "vicuna"})
        EXPECT_TRUE(pocket::builtin_chat_template(n).has_value()) << n;
    EXPECT_FALSE(pocket::builtin_chat_template("nonsense").has_value());
    EXPECT_EQ(pocket::builtin_chat_template_names().size(), 8u);
}

TEST(BuiltinTemplates, DocumentedFormats) {
    EXPECT_EQ(render_builtin("chatml", true, std::nullopt, "<|im_end|>"),
              "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
              "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nBye?<|im_end|>\n<|im_start|>assistant\n");
    EXPECT_EQ(render_builtin("llama2", true, "<s>", "</s>"),
              "<s>[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHi [/INST] Hello! </s><s>[INST] Bye? [/INST]");
    EXPECT_EQ(render_builtin("llama3", true, "<|begin_of_text|>", "<|eot_id|>"),
              "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>"
              "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
              "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
              "<|start_header_id|>user<|end_header_id|>\n\nBye?<|eot_id|>"
              "<|start_header_id|>assistant<|end_header_id|>\n\n");
    EXPECT_EQ(render_builtin("mistral", true, "<s>", "</s>"), "<s>[INST] You are terse.\n\nHi [/INST]Hello!</s>[INST] Bye? [/INST]");
    EXPECT_EQ(render_builtin("gemma", true, "<bos>", "<eos>"),
              "<bos><start_of_turn>user\nYou are terse.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n"
              "<start_of_turn>user\nBye?<end_of_turn>\n<start_of_turn>model\n");
    EXPECT_EQ(render_builtin("phi3", true, "<s>", "<|endoftext|>"),
              "<|system|>\nYou are terse.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\nHello!<|end|>\n"
              "<|user|>\nBye?<|end|>\n<|assistant|>\n");
    EXPECT_EQ(render_builtin("zephyr", true, "<s>", "</s>"),
              "<|system|>\nYou are terse.</s>\n<|user|>\nHi</s>\n<|assistant|>\nHello!</s>\n<|user|>\nBye?</s>\n<|assistant|>\n");
    EXPECT_EQ(render_builtin("vicuna", true, "<s>", "</s>"), "You are terse. USER: Hi ASSISTANT: Hello!</s>USER: Bye? ASSISTANT:");
}

TEST(BuiltinTemplates, NoGenerationPromptAndNoTokens) {
    const std::vector<pocket::ChatMessage> one = {{"user", "Hi"}};
    EXPECT_EQ(render_builtin("chatml", false, std::nullopt, std::nullopt, one), "<|im_start|>user\nHi<|im_end|>\n");
    EXPECT_EQ(render_builtin("gemma", false, std::nullopt, std::nullopt, one), "<start_of_turn>user\nHi<end_of_turn>\n");
    EXPECT_EQ(render_builtin("llama2", true, std::nullopt, std::nullopt, one), "[INST] Hi [/INST]");
    // Every built-in renders an empty conversation and a conversation without tokens.
    for (const auto& name : pocket::builtin_chat_template_names()) {
        EXPECT_NO_THROW(render_builtin(name, true, std::nullopt, std::nullopt, {})) << name;
        EXPECT_NO_THROW(render_builtin(name, true, std::nullopt, std::nullopt)) << name;
    }
}

// Where a shared reference file uses the same format as a built-in, the built-in must give the
// same text (for the cases the reference template does not reject).
TEST(BuiltinTemplates, AgreeWithSharedReferences) {
    POCKET_REQUIRE_SHARED(shared);
    const std::pair<const char*, const char*> pairs[] = {
        {"chatml", "chatml"}, {"llama3", "llama3_1"}, {"zephyr", "zephyr"},
        {"vicuna", "vicuna"}, {"mistral", "mistral-instruct-v0.1"}, {"gemma", "gemini"}};
    for (const auto& [builtin, file] : pairs) {
        std::ifstream in(shared / "chat" / (std::string(file) + ".json"));
        ASSERT_TRUE(in) << file;
        std::stringstream ss;
        ss << in.rdbuf();
        const auto doc = nlohmann::ordered_json::parse(ss.str());
        const auto tmpl = pocket::ChatTemplate::parse(*pocket::builtin_chat_template(builtin));
        int compared = 0;
        for (const auto& c : doc.at("cases")) {
            if (!c.contains("expected")) continue;
            nlohmann::ordered_json vars{{"messages", c.at("messages")},
                                        {"add_generation_prompt", c.at("add_generation_prompt")},
                                        {"bos_token", doc.at("bos_token")},
                                        {"eos_token", doc.at("eos_token")}};
            EXPECT_EQ(pocket::render_chat_json(vars.dump(), tmpl), c.at("expected").get<std::string>())
                << builtin << " vs " << file << " / " << c.at("name").get<std::string>();
            ++compared;
        }
        EXPECT_GE(compared, 4) << file;
    }
}

// A vocab-only GGUF (SentencePiece "llama" model) with the given extra tokens, written to a
// temporary file.
class TempVocab {
public:
    TempVocab(const std::vector<std::string>& extra, const std::string& name, const std::string& chat_template) {
        static int counter = 0;
        path_ = std::filesystem::temp_directory_path() /
                ("pocket_chat_vocab_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".gguf");
        std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "a", "b"};
        tokens.insert(tokens.end(), extra.begin(), extra.end());
        std::vector<float> scores(tokens.size(), 0.0f);
        std::vector<int32_t> types(tokens.size(), 1);
        types[0] = 2;
        types[1] = types[2] = 3;
        for (size_t i = 5; i < tokens.size(); ++i) types[i] = 3;
        pocket::GgufWriter w(path_.string());
        w.set_string("general.architecture", "llama");
        if (!name.empty()) w.set_string("general.name", name);
        w.set_string("tokenizer.ggml.model", "llama");
        w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(tokens));
        w.set_array("tokenizer.ggml.scores", std::span<const float>(scores));
        w.set_array("tokenizer.ggml.token_type", std::span<const int32_t>(types));
        w.set<uint32_t>("tokenizer.ggml.bos_token_id", 1);
        w.set<uint32_t>("tokenizer.ggml.eos_token_id", 2);
        if (!chat_template.empty()) w.set_string("tokenizer.chat_template", chat_template);
        w.begin();
        w.finish();
        file_ = std::make_unique<pocket::GgufFile>(pocket::GgufFile::open(path_.string()));
        vocab_ = std::make_unique<pocket::Vocab>(pocket::Vocab::from_gguf(*file_));
    }
    ~TempVocab() {
        vocab_.reset();
        file_.reset();
        std::filesystem::remove(path_);
    }
    const pocket::GgufFile& file() const { return *file_; }
    const pocket::Vocab& vocab() const { return *vocab_; }

private:
    std::filesystem::path path_;
    std::unique_ptr<pocket::GgufFile> file_;
    std::unique_ptr<pocket::Vocab> vocab_;
};

TEST(TemplateSelection, GuessFromSpecialTokens) {
    EXPECT_EQ(pocket::guess_builtin_template(TempVocab({"<|im_start|>", "<|im_end|>"}, "", "").vocab()), "chatml");
    EXPECT_EQ(pocket::guess_builtin_template(TempVocab({"<|start_header_id|>", "<|eot_id|>"}, "", "").vocab()), "llama3");
    EXPECT_EQ(pocket::guess_builtin_template(TempVocab({"<start_of_turn>", "<end_of_turn>"}, "", "").vocab()), "gemma");
    EXPECT_EQ(pocket::guess_builtin_template(TempVocab({"<|user|>", "<|end|>", "<|assistant|>"}, "", "").vocab()), "phi3");
    EXPECT_EQ(pocket::guess_builtin_template(TempVocab({"[INST]", "[/INST]"}, "", "").vocab()), "mistral");
    EXPECT_EQ(pocket::guess_builtin_template(TempVocab({}, "Llama-2-7b-chat", "").vocab()), "llama2");
    EXPECT_EQ(pocket::guess_builtin_template(TempVocab({}, "", "").vocab()), "chatml");
}

TEST(TemplateSelection, FileTemplateOverrideAndFallback) {
    const std::vector<pocket::ChatMessage> one = {{"user", "Hi"}};
    {
        TempVocab v({"<|im_start|>"}, "", "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}");
        EXPECT_EQ(pocket::chat_template_for(v.file(), v.vocab()).render(one, true), "<user>Hi");
        // A built-in name overrides the file's template.
        EXPECT_EQ(pocket::chat_template_for(v.file(), v.vocab(), "phi3").render(one, true), "<|user|>\nHi<|end|>\n<|assistant|>\n");
        // So does a file of Jinja source.
        auto path = std::filesystem::temp_directory_path() / ("pocket_chat_override_" + std::to_string(::getpid()) + ".jinja");
        std::ofstream(path) << "{{ messages[0].content | upper }}\n";
        EXPECT_EQ(pocket::chat_template_for(v.file(), v.vocab(), path.string()).render(one, true), "HI");
        std::filesystem::remove(path);
        EXPECT_THROW(pocket::chat_template_for(v.file(), v.vocab(), "/nonexistent/template.jinja"), pocket::Error);
    }
    {
        // No template in the file: the guessed built-in.
        TempVocab v({"<start_of_turn>", "<end_of_turn>"}, "", "");
        EXPECT_EQ(pocket::chat_template_for(v.file(), v.vocab()).render(one, true), "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n");
    }
    {
        TempVocab v({}, "", "{% if %}");
        try {
            pocket::chat_template_for(v.file(), v.vocab());
            ADD_FAILURE() << "a broken template in the file must be reported";
        } catch (const pocket::Error& e) {
            EXPECT_NE(std::string(e.what()).find("tokenizer.chat_template"), std::string::npos) << e.what();
        }
    }
}

}  // namespace
