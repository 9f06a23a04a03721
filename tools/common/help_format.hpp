#pragma once
// --help as llama.cpp users read it: llama.cpp's short forms beside the long names ("-ngl,
// --n-gpu-layers N"), a plain value name (N, TEXT, FILE), the default in the description, and
// none of CLI11's own notation ("{false}", "TEXT:FILE", "args(2x)").
#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace pocket::tools {

class HelpFormatter : public CLI::Formatter {
public:
    // `aliases`: (short form, long form) pairs of the tool's llama.cpp flags.
    explicit HelpFormatter(std::vector<std::pair<std::string, std::string>> aliases) : aliases_(std::move(aliases)) {}

    std::string make_option_name(const CLI::Option* o, bool positional) const override {
        if (positional) return value_name(o);
        std::vector<std::string> names;
        for (const auto& s : o->get_snames()) names.push_back("-" + s);
        for (const auto& [short_form, long_form] : aliases_)
            for (const auto& l : o->get_lnames())
                if (long_form == "--" + l) names.push_back(short_form);
        for (const auto& l : o->get_lnames()) names.push_back("--" + l);
        std::string out;
        for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
        return out;
    }

    std::string make_option_opts(const CLI::Option* o) const override {
        // A flag has no value type; a positional's value name is already its name.
        if (o->get_type_name().empty() || !o->nonpositional()) return "";
        return " " + value_name(o);
    }

    std::string make_option_desc(const CLI::Option* o) const override {
        std::string desc = o->get_description();
        if (!o->get_type_name().empty() && !o->get_default_str().empty() && desc.find("default") == std::string::npos)
            desc += " (default: " + o->get_default_str() + ")";
        return desc;
    }

    std::string make_option_usage(const CLI::Option* o) const override { return value_name(o); }

private:
    // The value's name: the option text when the tool set one, else N, FILE or TEXT.
    static std::string value_name(const CLI::Option* o) {
        if (!o->get_option_text().empty()) return o->get_option_text();
        if (!o->nonpositional()) return o->get_name();
        const std::string t = o->get_type_name();
        if (t.starts_with("INT") || t.starts_with("UINT") || t.starts_with("FLOAT") || t.starts_with("NUMBER")) return "N";
        if (t.find("FILE") != std::string::npos) return "FILE";
        return "TEXT";
    }

    std::vector<std::pair<std::string, std::string>> aliases_;
};

}  // namespace pocket::tools
