#pragma once
// llama.cpp spells some flags as one dash and several letters (-ngl, -ub, -ctk, -cnv ...).
// CLI11 2.3 (Debian 12) takes only one letter after a single dash, so these are rewritten
// to their long forms before parsing. An "-x=value" form is rewritten too.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pocket::tools {

struct FlagAlias {
    std::string_view short_form;  // "-ngl"
    std::string_view long_form;   // "--n-gpu-layers"
};

class AliasedArgs {
public:
    AliasedArgs(int argc, char** argv, std::initializer_list<FlagAlias> aliases) {
        for (int i = 0; i < argc; ++i) {
            std::string a = argv[i];
            for (const auto& al : aliases) {
                if (a == al.short_form) a = std::string(al.long_form);
                else if (a.size() > al.short_form.size() && a.starts_with(al.short_form) && a[al.short_form.size()] == '=')
                    a = std::string(al.long_form) + a.substr(al.short_form.size());
            }
            storage_.push_back(std::move(a));
        }
        for (auto& s : storage_) pointers_.push_back(s.data());
    }
    int argc() const { return static_cast<int>(pointers_.size()); }
    char** argv() { return pointers_.data(); }

private:
    std::vector<std::string> storage_;
    std::vector<char*> pointers_;
};

}  // namespace pocket::tools
