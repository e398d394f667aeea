// CSV reader (what it accepts and refuses: csv.h). The file is read whole, split into lines
// and cells by hand (no locale: std::from_chars reads "1.5" the same in every locale), and
// every cell is checked before the table is returned; each failure is one line naming the file.
#include "datasets/csv.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <system_error>
#include <unordered_map>

#include "core/binary_file.h"
#include "core/error.h"
#include "core/logging.h"

namespace engine::datasets {
namespace {

constexpr size_t kShownChars = 40;  // a cell's text in a message is cut after this many bytes
constexpr size_t kListedColumns = 12;
constexpr double kMaxLabel = 2147483647.0;

// The text of a cell or name as a message shows it: in quotes `q`, made printable (so the
// message stays one line), cut after kShownChars bytes.
std::string shown(const std::string& s, char q = '\'') {
  return q + printable(s, kShownChars) + q;
}

// "column 3 (\"species\")", counted from 1; an unnamed column says so.
std::string column_words(const std::vector<std::string>& names, size_t col) {
  std::string out = "column " + std::to_string(col + 1);
  if (col < names.size()) out += names[col].empty() ? " (unnamed)" : " (" + shown(names[col], '"') + ")";
  return out;
}

// A double as the shortest text that reads back as it: 2.5, 2147483648, 0.1.
std::string number_text(double v) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, result.ptr);
}

std::string column_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < kListedColumns; ++i) {
    out += (i ? ", " : "") + (names[i].empty() ? std::string("(unnamed)") : shown(names[i], '"'));
  }
  if (names.size() > kListedColumns) out += ", ... (" + std::to_string(names.size()) + " in all)";
  return out;
}

// The whole file as text: read_file refuses what is not a regular file, names a missing one.
std::string read_text(const std::string& path) {
  const Bytes bytes = read_file(path, "CSV");
  return std::string(bytes.begin(), bytes.end());
}

bool is_space(char c, char delimiter) { return (c == ' ' || c == '\t' || c == '\r') && c != delimiter; }

// Splits one line (without its '\n') into cells, unquoting quoted ones; returns the count.
// `cells` is reused from line to line, so a long file does not allocate per cell.
size_t split_line(const char* p, const char* end, char delimiter, int64_t line,
                  const std::vector<std::string>& names, const std::string& path,
                  std::vector<std::string>& cells) {
  size_t count = 0;
  while (true) {
    if (count == cells.size()) cells.emplace_back();
    std::string& cell = cells[count];
    cell.clear();
    while (p < end && is_space(*p, delimiter)) ++p;
    if (p < end && *p == '"') {
      ++p;
      while (true) {
        ENGINE_CHECK(p < end, "CSV file ", path, ": line ", line, ", ", column_words(names, count),
                     ": unterminated quote (a quoted cell must end on its own line)");
        if (*p == '"') {
          if (p + 1 < end && p[1] == '"') {  // "" inside quotes is one "
            cell += '"';
            p += 2;
            continue;
          }
          ++p;
          break;
        }
        cell += *p++;
      }
      while (p < end && is_space(*p, delimiter)) ++p;
      ENGINE_CHECK(p == end || *p == delimiter, "CSV file ", path, ": line ", line, ", ",
                   column_words(names, count), ": text after the closing quote");
    } else {
      const char* start = p;
      while (p < end && *p != delimiter) ++p;
      const char* stop = p;
      while (stop > start && is_space(stop[-1], delimiter)) --stop;
      cell.assign(start, stop);
    }
    ++count;
    if (p == end) return count;
    ++p;  // the delimiter
  }
}

enum class Parsed { Ok, NotANumber, TooLarge };

// Whether a number std::from_chars found out of a double's range is too large (1e400) rather
// than too small (1e-400): its decimal exponent, from the digits before the point (or the
// zeros after it) and the exponent, is positive. The text is a well-formed number.
bool too_large(const char* p, const char* end) {
  if (p < end && (*p == '-' || *p == '+')) ++p;
  int64_t magnitude = 0;
  bool leading = true, seen_point = false;
  for (; p < end && (std::isdigit(static_cast<unsigned char>(*p)) || *p == '.'); ++p) {
    if (*p == '.') {
      seen_point = true;
    } else if (leading && *p == '0') {
      if (seen_point) --magnitude;  // 0.000ddd
    } else {
      if (leading && seen_point) --magnitude;
      leading = false;
      if (!seen_point && magnitude < 1000000) ++magnitude;
    }
  }
  if (!leading && magnitude > 0) --magnitude;  // ddd.: 3 digits is 10^2
  int64_t exponent = 0;
  bool negative = false;
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p < end && (*p == '-' || *p == '+')) negative = *p++ == '-';
    for (; p < end && std::isdigit(static_cast<unsigned char>(*p)); ++p) {
      if (exponent < 1000000000) exponent = exponent * 10 + (*p - '0');
    }
  }
  return magnitude + (negative ? -exponent : exponent) > 0;
}

// Reads a cell as a double. Too small for a double (1e-400) reads as 0, as strtod and Python
// read it; too large (1e400) is refused like any number beyond float32's range.
Parsed parse_number(const std::string& cell, double& value) {
  const char* begin = cell.data();
  const char* end = begin + cell.size();
  // std::from_chars takes no '+'; a '+' before a digit or a '.' is the only one we allow.
  const char* digits = begin;
  if (end - begin > 1 && *begin == '+' &&
      (std::isdigit(static_cast<unsigned char>(begin[1])) || begin[1] == '.')) {
    ++digits;
  }
  const auto [ptr, ec] = std::from_chars(digits, end, value, std::chars_format::general);
  if (ptr != end || digits == end) return Parsed::NotANumber;
  if (ec == std::errc::result_out_of_range) {
    if (too_large(begin, end)) return Parsed::TooLarge;
    value = *begin == '-' ? -0.0 : 0.0;
    return Parsed::Ok;
  }
  return ec == std::errc{} ? Parsed::Ok : Parsed::NotANumber;
}

// Every column name, refusing a name used twice (empty names may repeat: unreachable by name).
void check_names(const std::vector<std::string>& names, int64_t line, const std::string& path) {
  std::unordered_map<std::string, size_t> first;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) continue;
    const auto [it, inserted] = first.emplace(names[i], i);
    ENGINE_CHECK(inserted, "CSV file ", path, ": columns ", it->second + 1, " and ", i + 1,
                 " of the header (line ", line, ") are both named ", shown(names[i], '"'));
  }
}

int64_t find_column(const CsvTable& table, const std::string& name) {
  for (size_t i = 0; i < table.columns.size(); ++i) {
    if (!name.empty() && table.columns[i] == name) return static_cast<int64_t>(i);
  }
  return -1;
}

// A CsvColumn as a 0-based index into `table`; `role` ("target", "feature") for messages.
int64_t resolve(const CsvTable& table, const CsvColumn& column, const char* role) {
  if (column.by_index()) {
    ENGINE_CHECK(column.index() >= 0 && column.index() < table.cols(), "CSV file ", table.path,
                 ": ", role, " column index ", column.index(), " is out of range: the file has ",
                 table.cols(), " columns (indices 0 to ", table.cols() - 1, ")");
    return column.index();
  }
  const int64_t index = find_column(table, column.name());
  ENGINE_CHECK(index >= 0, "CSV file ", table.path, ": no column named ",
               shown(column.name(), '"'), " (", role, "); the columns are ",
               column_list(table.columns));
  return index;
}

}  // namespace

int64_t CsvTable::column_index(const std::string& name) const {
  const int64_t index = find_column(*this, name);
  ENGINE_CHECK(index >= 0, "CSV file ", path, ": no column named ", shown(name, '"'),
               "; the columns are ", column_list(columns));
  return index;
}

CsvTable read_csv(const std::string& path, const CsvOptions& options) {
  const char d = options.delimiter;
  ENGINE_CHECK(d != '"' && d != '\n' && d != '\r' && d != '\0' && d != ' ',
               "read_csv: the delimiter cannot be ", shown(std::string(1, d)),
               " (use ',', ';' or '\\t')");
  const std::string text = read_text(path);
  ENGINE_CHECK(!text.empty(), "CSV file ", path, ": empty file (0 bytes)");

  CsvTable table;
  table.path = path;
  std::vector<std::string> cells;
  int64_t header_line = 0;
  size_t pos = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;  // UTF-8 byte-order mark
  for (int64_t line = 1; pos < text.size(); ++line) {
    size_t stop = text.find('\n', pos);
    if (stop == std::string::npos) stop = text.size();
    const char* begin = text.data() + pos;
    const char* end = text.data() + stop;
    pos = stop + 1;
    if (end > begin && end[-1] == '\r') --end;
    bool blank = true;
    for (const char* c = begin; c < end && blank; ++c) blank = is_space(*c, d);
    if (blank) continue;

    const size_t count = split_line(begin, end, d, line, table.columns, path, cells);
    if (header_line == 0) {
      header_line = line;
      table.columns.assign(cells.begin(), cells.begin() + static_cast<std::ptrdiff_t>(count));
      check_names(table.columns, line, path);
      continue;
    }
    ENGINE_CHECK(count == table.columns.size(), "CSV file ", path, ": line ", line, " has ",
                 count, count == 1 ? " column" : " columns", " where the header (line ",
                 header_line, ") has ", table.columns.size());
    for (size_t col = 0; col < count; ++col) {
      const std::string& cell = cells[col];
      const auto where = [&] {
        return "CSV file " + path + ": line " + std::to_string(line) + ", " +
               column_words(table.columns, col) + ": ";
      };
      ENGINE_CHECK(!cell.empty(), where(),
                   "empty cell (missing values are not supported: fill or drop them first)");
      double value = 0.0;
      const Parsed parsed = parse_number(cell, value);
      ENGINE_CHECK(parsed != Parsed::NotANumber, where(), shown(cell), " is not a number");
      ENGINE_CHECK(std::isfinite(value), where(), shown(cell),
                   ": NaN and infinity are refused (a missing value? fill or drop it first)");
      ENGINE_CHECK(parsed == Parsed::Ok &&
                       std::fabs(value) <= static_cast<double>(std::numeric_limits<float>::max()),
                   where(), shown(cell), " is beyond float32's range (about 3.4e38)");
      table.values.push_back(value);
    }
    table.lines.push_back(line);
  }
  ENGINE_CHECK(header_line != 0, "CSV file ", path,
               ": no header row: the file holds only blank lines");
  ENGINE_CHECK(!table.lines.empty(), "CSV file ", path, ": header only (line ", header_line,
               ", ", table.columns.size(), table.columns.size() == 1 ? " column" : " columns",
               "), no data rows");
  return table;
}

CsvData split_csv(const CsvTable& table, const std::vector<CsvColumn>& targets, CsvTarget kind,
                  const std::vector<CsvColumn>& features) {
  const int64_t rows = table.rows();
  const int64_t cols = table.cols();
  ENGINE_CHECK(static_cast<int64_t>(table.values.size()) == rows * cols, "CSV file ", table.path,
               ": inconsistent table: ", table.values.size(), " values for ", rows, " rows of ",
               cols, " columns");

  // Which column is what: 0 unused, 1 target, 2 feature.
  std::vector<int> role(static_cast<size_t>(cols), 0);
  std::vector<int64_t> target_cols, feature_cols;
  const auto take = [&](const CsvColumn& c, int as, std::vector<int64_t>& into) {
    const int64_t index = resolve(table, c, as == 1 ? "target" : "feature");
    int& r = role[static_cast<size_t>(index)];
    ENGINE_CHECK(r == 0, "CSV file ", table.path, ": ",
                 column_words(table.columns, static_cast<size_t>(index)),
                 r == as ? " is asked for twice" : " is both a target and a feature");
    r = as;
    into.push_back(index);
  };
  for (const CsvColumn& c : targets) take(c, 1, target_cols);
  for (const CsvColumn& c : features) take(c, 2, feature_cols);
  if (features.empty()) {
    for (int64_t i = 0; i < cols; ++i) {
      if (role[static_cast<size_t>(i)] == 0) feature_cols.push_back(i);
    }
  }
  ENGINE_CHECK(!feature_cols.empty(), "CSV file ", table.path, ": no feature columns left: all ",
               cols, cols == 1 ? " column is a target" : " columns are targets");

  CsvData out;
  const auto n_features = static_cast<int64_t>(feature_cols.size());
  std::vector<float> x(static_cast<size_t>(rows * n_features));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < n_features; ++f) {
      // In float32's range: read_csv checked every value.
      x[static_cast<size_t>(r * n_features + f)] =
          static_cast<float>(table.at(r, feature_cols[static_cast<size_t>(f)]));
    }
  }
  out.x = Tensor::from_vector(x, {rows, n_features});
  for (int64_t c : feature_cols) out.feature_names.push_back(table.columns[static_cast<size_t>(c)]);
  for (int64_t c : target_cols) out.target_names.push_back(table.columns[static_cast<size_t>(c)]);
  if (target_cols.empty()) return out;

  const auto n_targets = static_cast<int64_t>(target_cols.size());
  const Shape y_shape = n_targets == 1 ? Shape{rows} : Shape{rows, n_targets};
  const size_t n_y = static_cast<size_t>(rows * n_targets);
  if (kind == CsvTarget::Values) {
    std::vector<float> y(n_y);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t t = 0; t < n_targets; ++t) {
        y[static_cast<size_t>(r * n_targets + t)] =
            static_cast<float>(table.at(r, target_cols[static_cast<size_t>(t)]));
      }
    }
    out.y = Tensor::from_vector(y, y_shape);
  } else {
    std::vector<int32_t> y(n_y);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t t = 0; t < n_targets; ++t) {
        const int64_t c = target_cols[static_cast<size_t>(t)];
        const double v = table.at(r, c);
        ENGINE_CHECK(v >= 0.0 && v <= kMaxLabel && v == std::floor(v), "CSV file ", table.path,
                     ": line ", table.lines[static_cast<size_t>(r)], ", ",
                     column_words(table.columns, static_cast<size_t>(c)), ": ", number_text(v),
                     " is not a class label (labels are whole numbers from 0 to 2147483647)");
        y[static_cast<size_t>(r * n_targets + t)] = static_cast<int32_t>(v);
      }
    }
    out.y = Tensor::from_ints(y, y_shape);
  }
  return out;
}

CsvData load_csv(const std::string& path, const std::vector<CsvColumn>& targets, CsvTarget kind,
                 const CsvOptions& options) {
  return split_csv(read_csv(path, options), targets, kind);
}

}  // namespace engine::datasets
