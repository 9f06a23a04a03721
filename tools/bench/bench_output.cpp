// bench's output formats, as llama-bench writes them: a markdown table (aligned columns, one
// for each parameter that is not at its default, the build line under it), JSON, JSON lines,
// CSV and SQL.
#include "bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

// GCC 12 warns falsely (-Wrestrict, fixed in later releases) on "text" + std::string inlined at -O2; this
// file used to compile once per configure, and now does after every commit (build_stamp.hpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include "build_stamp.hpp"  // POCKET_BUILD_COMMIT, POCKET_BUILD_NUMBER (tools/bench/CMakeLists.txt)

namespace pocket::tools {
namespace {

// A field of every format: its name, SQL type and value as text (strings quoted by the caller).
struct Field {
    const char* name;
    bool text;
    std::function<std::string(const BenchResult&)> value;
};

std::string samples(const BenchResult& r) {
    std::string s;
    for (size_t k = 0; k < r.samples_ts.size(); ++k) s += fmt::format("{}{:.6f}", k ? ", " : "", r.samples_ts[k]);
    return s;
}

const std::vector<Field>& fields() {
    static const std::vector<Field> f = {
        {"build_commit", true, [](const BenchResult&) { return std::string(POCKET_BUILD_COMMIT); }},
        {"build_number", false, [](const BenchResult&) { return std::to_string(POCKET_BUILD_NUMBER); }},
        {"model_filename", true, [](const BenchResult& r) { return r.model_filename; }},
        {"model_type", true, [](const BenchResult& r) { return r.model_type; }},
        {"model_size", false, [](const BenchResult& r) { return std::to_string(r.model_size); }},
        {"model_n_params", false, [](const BenchResult& r) { return std::to_string(r.model_n_params); }},
        {"backends", true, [](const BenchResult& r) { return r.backends; }},
        {"n_gpu_layers", false, [](const BenchResult& r) { return std::to_string(r.n_gpu_layers); }},
        {"cpu_isa", true, [](const BenchResult& r) { return r.isa; }},
        {"n_threads", false, [](const BenchResult& r) { return std::to_string(r.n_threads); }},
        {"n_batch", false, [](const BenchResult& r) { return std::to_string(r.n_batch); }},
        {"n_ubatch", false, [](const BenchResult& r) { return std::to_string(r.n_ubatch); }},
        {"flash_attn", false, [](const BenchResult& r) { return std::to_string(r.flash_attn); }},
        {"n_prompt", false, [](const BenchResult& r) { return std::to_string(r.n_prompt); }},
        {"n_gen", false, [](const BenchResult& r) { return std::to_string(r.n_gen); }},
        {"n_depth", false, [](const BenchResult& r) { return std::to_string(r.n_depth); }},
        {"avg_ts", false, [](const BenchResult& r) { return fmt::format("{:.6f}", r.avg_ts); }},
        {"stddev_ts", false, [](const BenchResult& r) { return fmt::format("{:.6f}", r.stddev_ts); }},
        // pocket's own, after llama-bench's fields so their positions do not move
        {"load_ms", false, [](const BenchResult& r) { return fmt::format("{:.1f}", r.load_ms); }},
        {"peak_rss_bytes", false, [](const BenchResult& r) { return std::to_string(r.peak_rss_bytes); }},
        {"weight_bytes_per_token", false, [](const BenchResult& r) { return std::to_string(r.weight_bytes_per_token); }},
        {"read_bytes_per_s", false, [](const BenchResult& r) { return fmt::format("{:.0f}", r.read_bytes_per_s); }},
    };
    return f;
}

std::string json_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) {
            out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
            continue;
        }
        out += c;
    }
    return out;
}

void print_json(const std::vector<BenchResult>& results, bool lines, std::ostream& out) {
    if (!lines) out << "[\n";
    for (size_t i = 0; i < results.size(); ++i) {
        std::string obj = "{";
        for (const Field& f : fields())
            obj += fmt::format("{}\"{}\": {}", obj.size() > 1 ? ", " : "", f.name, f.text ? "\"" + json_escape(f.value(results[i])) + "\"" : f.value(results[i]));
        obj += fmt::format(", \"samples_ts\": [{}]}}", samples(results[i]));
        out << (lines ? "" : "  ") << obj << (!lines && i + 1 < results.size() ? "," : "") << "\n";
    }
    if (!lines) out << "]\n";
}

void print_csv(const std::vector<BenchResult>& results, std::ostream& out) {
    std::string head;
    for (const Field& f : fields()) head += (head.empty() ? "" : ",") + std::string(f.name);
    out << head << "\n";
    for (const auto& r : results) {
        std::string row;
        for (const Field& f : fields()) {
            std::string v = f.value(r);
            if (f.text) {
                std::string q;
                for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
                v = "\"" + q + "\"";
            }
            row += (row.empty() ? "" : ",") + v;
        }
        out << row << "\n";
    }
}

// llama-bench's -o sql: a table and one INSERT per test, for sqlite3.
void print_sql(const std::vector<BenchResult>& results, std::ostream& out) {
    out << "CREATE TABLE IF NOT EXISTS test (\n";
    for (size_t i = 0; i < fields().size(); ++i)
        out << fmt::format("  {} {}{}\n", fields()[i].name,
                           fields()[i].text ? "TEXT" : std::string_view(fields()[i].name).ends_with("_ts") ? "REAL" : "INTEGER",
                           i + 1 < fields().size() ? "," : "");
    out << ");\n\n";
    std::string names;
    for (const Field& f : fields()) names += (names.empty() ? "" : ", ") + std::string(f.name);
    for (const auto& r : results) {
        std::string values;
        for (const Field& f : fields()) {
            std::string v = f.value(r);
            if (f.text) {
                std::string q;
                for (char c : v) q += c == '\'' ? std::string("''") : std::string(1, c);
                v = "'" + q + "'";
            }
            values += (values.empty() ? "" : ", ") + v;
        }
        out << "INSERT INTO test (" << names << ") VALUES (" << values << ");\n";
    }
}

// A markdown column: header, right-aligned or not, the cell of a result.
struct Column {
    std::string header;
    bool right;
    std::function<std::string(const BenchResult&)> cell;
};

void print_markdown(const std::vector<BenchResult>& results, std::ostream& out) {
    auto differs = [&](auto member, int def) {
        return std::any_of(results.begin(), results.end(), [&](const BenchResult& r) { return r.*member != def; });
    };
    std::vector<Column> cols = {
        {"model", false, [](const BenchResult& r) { return r.model_type; }},
        {"size", true, [](const BenchResult& r) { return fmt::format("{:.2f} MiB", static_cast<double>(r.model_size) / (1024.0 * 1024.0)); }},
        {"params", true,
         [](const BenchResult& r) {
             const bool b = r.model_n_params >= 1000000000;
             return fmt::format("{:.2f} {}", static_cast<double>(r.model_n_params) / (b ? 1e9 : 1e6), b ? "B" : "M");
         }},
        {"backend", false, [](const BenchResult& r) { return r.backends; }},
        {"ngl", true, [](const BenchResult& r) { return std::to_string(r.n_gpu_layers); }},
        {"isa", false, [](const BenchResult& r) { return r.isa; }},
        {"threads", true, [](const BenchResult& r) { return std::to_string(r.n_threads); }},
    };
    // A column for each parameter some test ran away from its default (llama-bench's habit).
    if (differs(&BenchResult::n_batch, 2048)) cols.push_back({"n_batch", true, [](const BenchResult& r) { return std::to_string(r.n_batch); }});
    if (differs(&BenchResult::n_ubatch, 512)) cols.push_back({"n_ubatch", true, [](const BenchResult& r) { return std::to_string(r.n_ubatch); }});
    if (differs(&BenchResult::flash_attn, -1)) cols.push_back({"fa", true, [](const BenchResult& r) { return std::to_string(r.flash_attn); }});
    cols.push_back({"test", true, [](const BenchResult& r) { return bench_test_name(r); }});
    cols.push_back({"t/s", true, [](const BenchResult& r) { return fmt::format("{:.2f} ± {:.2f}", r.avg_ts, r.stddev_ts); }});
    cols.push_back({"load s", true, [](const BenchResult& r) { return fmt::format("{:.2f}", r.load_ms / 1000.0); }});
    cols.push_back({"peak RSS", true, [](const BenchResult& r) {
                        return fmt::format("{:.0f} MiB", static_cast<double>(r.peak_rss_bytes) / (1024.0 * 1024.0));
                    }});
    // --bandwidth: a generation test's weight reads per second, the memory read measured
    // right after it, and the first as a share of the second.
    if (std::any_of(results.begin(), results.end(), [](const BenchResult& r) { return r.read_bytes_per_s > 0; })) {
        auto weights_per_s = [](const BenchResult& r) { return static_cast<double>(r.weight_bytes_per_token) * r.avg_ts; };
        auto measured = [](const BenchResult& r) { return r.read_bytes_per_s > 0; };
        cols.push_back({"weights GB/s", true, [=](const BenchResult& r) { return measured(r) ? fmt::format("{:.1f}", weights_per_s(r) / 1e9) : "-"; }});
        cols.push_back({"read GB/s", true, [=](const BenchResult& r) { return measured(r) ? fmt::format("{:.1f}", r.read_bytes_per_s / 1e9) : "-"; }});
        cols.push_back({"of read", true, [=](const BenchResult& r) {
                            return measured(r) ? fmt::format("{:.0f}%", 100.0 * weights_per_s(r) / r.read_bytes_per_s) : "-";
                        }});
    }

    // Widths in characters (the ± is one character, two bytes).
    auto chars = [](const std::string& s) {
        return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
    };
    std::vector<size_t> width;
    for (const Column& c : cols) {
        size_t w = std::max<size_t>(c.header.size(), 3);
        for (const auto& r : results) w = std::max(w, chars(c.cell(r)));
        width.push_back(w);
    }
    auto pad = [&](const std::string& s, size_t w, bool right) {
        const std::string fill(w - std::min(w, chars(s)), ' ');
        return right ? fill + s : s + fill;
    };
    std::string head = "|", rule = "|";
    for (size_t i = 0; i < cols.size(); ++i) {
        head += " " + pad(cols[i].header, width[i], cols[i].right) + " |";
        rule += " " + std::string(width[i] - (cols[i].right ? 1 : 0), '-') + (cols[i].right ? ":" : "") + " |";
    }
    out << head << "\n" << rule << "\n";
    for (const auto& r : results) {
        std::string row = "|";
        for (size_t i = 0; i < cols.size(); ++i) row += " " + pad(cols[i].cell(r), width[i], cols[i].right) + " |";
        out << row << "\n";
    }
    out << "\nbuild: " << POCKET_BUILD_COMMIT << " (" << POCKET_BUILD_NUMBER << ")\n";
}

}  // namespace

void print_bench(const std::vector<BenchResult>& results, const std::string& format, std::ostream& out) {
    if (format == "json" || format == "jsonl") print_json(results, format == "jsonl", out);
    else if (format == "csv") print_csv(results, out);
    else if (format == "sql") print_sql(results, out);
    else print_markdown(results, out);
}

}  // namespace pocket::tools
