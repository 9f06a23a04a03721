#include "text/pre_tokenizer_rules.hpp"

#include "pocket/error.hpp"

#include <array>

namespace pocket {

namespace {

// The regexes, as llama.cpp writes them (src/llama-vocab.cpp, llm_tokenizer_bpe). Where
// llama.cpp runs a hand-written splitter for a regex, the regex itself is given here: PCRE2
// runs it with the same leftmost-first semantics.
const char* const kGpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
const char* const kLlama3 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kQwen2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kQwen35 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kJais2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}";
const char* const kDeepseek3 =
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";
const char* const kCjk = "[一-龥ࠀ-一가-퟿]+";
const char* const kPoro = " ?[^(\\s|.,!?…。，、।۔،)]+";
const char* const kTekken =
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kGpt4o =
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

enum class Family {
    Default, Llama3, Jais2, DeepseekLlm, Deepseek3, Youtu, DeepseekCoder, Falcon, Starcoder, Gpt2,
    Qwen2, Qwen35, Poro, Viking, Tekken, Chameleon, Gpt4o, Bailingmoe, SeedCoder, ExaoneMoe, Minicpm5,
};

std::vector<std::string> family_patterns(Family f) {
    switch (f) {
        case Family::Default:
            return {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"};
        case Family::Llama3: return {kLlama3};
        case Family::Jais2: return {kJais2};
        case Family::DeepseekLlm:
            return {"[\r\n]",
    "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
    "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
                    "\\s+$",
                    kCjk,
                    "\\p{N}+"};
        case Family::Deepseek3: return {"\\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+", kDeepseek3};
        case Family::Youtu:
            return {
    "[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+",
                "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
        case Family::DeepseekCoder: return {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", kCjk, "\\p{N}"};
        case Family::Falcon: return {"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2, "[0-9][0-9][0-9]"};
        case Family::Starcoder: return {"\\p{N}", kGpt2};
        case Family::Gpt2: return {kGpt2};
        case Family::Qwen2: return {kQwen2};
        case Family::Qwen35: return {kQwen35};
        case Family::Poro: return {kPoro};
        case Family::Viking: return {kPoro, "\\p{N}"};
        case Family::Tekken: return {kTekken};
        case Family::Chameleon:
            return {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}",
                    "[\\p{P}!-/:-@\\[-`{-~]", kGpt2};
        case Family::Gpt4o: return {kGpt4o};
        case Family::Bailingmoe:
            return {"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"};
        case Family::SeedCoder:
            return {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
        case Family::ExaoneMoe:
            return {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"};
        case Family::Minicpm5:
            return {"\\p{N}{1,3}",
                    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
    }
    return {};
}

struct NamedRule {
    std::string_view name;
    Family family;
    bool ignore_merges = false;
    bool add_bos = false;
    bool clean_spaces = true;
    bool add_sep = false;
    bool no_bos_token = false;
};

// Names and flags as llama.cpp's llama_vocab::impl::load assigns them.
constexpr NamedRule kRules[] = {
    {"default", Family::Default},
    {"minicpm5", Family::Minicpm5, true},
    {"llama3", Family::Llama3, true, true},
    {"llama-v3", Family::Llama3, true, true},
    {"llama-bpe", Family::Llama3, true, true},
    {"falcon3", Family::Llama3, true, true},
    {"falcon-h1", Family::Llama3, true, true},
    {"pixtral", Family::Llama3, true, true},
    {"midm-2.0", Family::Llama3, true, true},
    {"lfm2", Family::Llama3, true, true},
    {"jina-v5-nano", Family::Llama3, true, true},
    {"dbrx", Family::Llama3},
    {"smaug-bpe", Family::Llama3},
    {"deepseek-llm", Family::DeepseekLlm, false, false, false},
    {"deepseek-coder", Family::DeepseekCoder, false, false, false},
    {"deepseek-v3", Family::Deepseek3, false, false, false},
    {"hunyuan-dense", Family::Deepseek3, false, false, false},
    {"joyai-llm", Family::Deepseek3, false, false, false},
    {"youtu", Family::Youtu, true, false, false},
    {"falcon", Family::Falcon},
    {"mpt", Family::Gpt2},
    {"starcoder", Family::Starcoder},
    {"refact", Family::Starcoder},
    {"command-r", Family::Starcoder, false, false, false},
    {"smollm", Family::Starcoder, false, false, false},
    {"codeshell", Family::Starcoder},
    {"exaone", Family::Starcoder},
    {"minerva-7b", Family::Starcoder},
    {"mellum2", Family::Starcoder},
    {"gpt-2", Family::Gpt2},
    {"phi-2", Family::Gpt2},
    {"jina-es", Family::Gpt2},
    {"jina-de", Family::Gpt2},
    {"gigachat", Family::Gpt2},
    {"jina-v2-es", Family::Gpt2},
    {"jina-v2-de", Family::Gpt2},
    {"a.x-4.0", Family::Gpt2},
    {"mellum", Family::Gpt2},
    {"modern-bert", Family::Gpt2},
    {"exaone4", Family::Gpt2},
    {"olmo", Family::Gpt2},
    {"jais", Family::Gpt2},
    {"trillion", Family::Gpt2, false, false, false},
    {"granite-docling", Family::Gpt2, false, false, false},
    {"jina-v1-en", Family::Gpt2, false, false, true, true},
    {"jina-v2-code", Family::Gpt2, false, false, true, true},
    {"roberta-bpe", Family::Gpt2, false, false, true, true},
    {"jais-2", Family::Jais2},
    {"qwen2", Family::Qwen2, false, false, false},
    {"deepseek-r1-qwen", Family::Qwen2, false, false, false},
    {"kormo", Family::Qwen2, false, false, false},
    {"f2llmv2", Family::Qwen2, false, false, false},
    {"megrez", Family::Qwen2},
    {"stablelm2", Family::Qwen2},
    {"hunyuan", Family::Qwen2, false, false, false},
    {"solar-open", Family::Qwen2, false, false, false},
    {"grok-2", Family::Qwen2, false, false, false},
    {"laguna", Family::Qwen2, false, false, false},
    {"qwen35", Family::Qwen35, false, false, false},
    {"poro-chat", Family::Poro, false, false, false},
    {"bloom", Family::Poro},
    {"gpt3-finnish", Family::Poro},
    {"glm4", Family::Llama3, false, false, true, false, true},
    {"chatglm-bpe", Family::Llama3, false, false, true, false, true},
    {"viking", Family::Viking, false, false, false},
    {"tekken", Family::Tekken, true, true, false},
    {"chameleon", Family::Chameleon, false, true, false},
    {"gpt-4o", Family::Gpt4o, false, false, false},
    {"llama4", Family::Gpt4o, false, false, false},
    {"kanana2", Family::Gpt4o, false, false, false},
    {"talkie", Family::Gpt4o, false, false, false},
    {"minimax-m2", Family::Gpt4o, false, false, false},
    {"bailingmoe", Family::Bailingmoe, false, false, false},
    {"bailingmoe2", Family::Bailingmoe, false, false, false},
    {"llada-moe", Family::Bailingmoe, false, false, false},
    {"seed-coder", Family::SeedCoder, false, false, false},
    {"exaone-moe", Family::ExaoneMoe},
};

// Known to llama.cpp, but they need hand-written splitters or byte handling pocket lacks.
constexpr std::string_view kUnsupported[] = {
    "kimi-k2", "afmoe", "gemma4", "granite-embed-multi-311m", "granite-embed-multi-97m", "sarvam-moe",
    "tiny_aya", "cohere2moe", "superbpe", "whitespace",
};

}  // namespace

PreTokenizerRule pre_tokenizer_rule(std::string_view pre) {
    for (const auto& r : kRules) {
        if (r.name != pre) continue;
        PreTokenizerRule rule;
        rule.patterns = family_patterns(r.family);
        rule.ignore_merges = r.ignore_merges;
        rule.add_bos = r.add_bos;
        rule.clean_spaces = r.clean_spaces;
        rule.add_sep = r.add_sep;
        rule.no_bos_token = r.no_bos_token;
        return rule;
    }
    for (auto name : kUnsupported) {
        if (name == pre) throw Error("pre-tokenizer '{}' is not supported yet", pre);
    }
    throw Error("unknown pre-tokenizer type: '{}'", pre);
}

}  // namespace pocket
