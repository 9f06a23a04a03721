#pragma once
// Token ids back to text, as llama.cpp's token_to_piece and llama_detokenize do it.
#include "pocket/vocab.hpp"

#include <span>
#include <string>
#include <vector>

namespace pocket {

// The bytes of one token. CONTROL and UNKNOWN tokens give their text only when `special`;
// USER_DEFINED ones always do; NORMAL ones are unescaped (SPM/WPM: U+2581 -> space) or
// byte-decoded (BPE); BYTE tokens <0xXX> give their byte; anything else gives nothing.
std::string token_piece(const Vocab& vocab, TokenId id, bool special);

// llama.cpp's clean_up_tokenization_spaces: " ?" " !" " ." " ," lose the space, a lone " ' "
// loses both, and " 's" " 'm" " 're" " 've" lose theirs.
std::string clean_up_spaces(const std::string& text);

// Joins the pieces of `ids` the way llama_detokenize does; `pieces_with_special` holds
// token_piece(id, true) for every id.
std::string join_pieces(const Vocab& vocab, std::span<const TokenId> ids, bool remove_special,
                        const std::vector<std::string>& pieces_with_special, bool unparse_special);

}  // namespace pocket
