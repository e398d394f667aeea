// The CSV reader (datasets/csv.h) on files the tests write: good files in their variants
// (CRLF, blank lines, quotes, spaces, a byte-order mark, other delimiters) become the tables and
// tensors expected; every bad file and bad column choice gives its exact one-line message.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "datasets/csv.h"
#include "file_fixtures.h"

using engine::DType;
using engine::Shape;
using engine::datasets::CsvColumn;
using engine::datasets::CsvData;
using engine::datasets::CsvOptions;
using engine::datasets::CsvTable;
using engine::datasets::CsvTarget;
using engine::datasets::load_csv;
using engine::datasets::read_csv;
using engine::datasets::split_csv;
using engine::test::Bytes;
using engine::test::error_of;
using engine::test::TempDir;
using engine::test::write_bytes;

namespace {

std::string write_csv(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  write_bytes(path, Bytes(text.begin(), text.end()));
  return path;
}

// read_csv must refuse `text` with exactly "CSV file <path>: <message>".
void check_refused(const std::string& text, const std::string& message,
                   const CsvOptions& options = {}) {
  TempDir dir;
  const std::string path = write_csv(dir, "bad.csv", text);
  INFO("file: " << text);
  CHECK(error_of([&] { read_csv(path, options); }) == "CSV file " + path + ": " + message);
}

const char* const kIris =
    "sepal_len,sepal_wid,species\n"
    "5.1,3.5,0\n"
    "6.2,2.9,1\n"
    "7.7,3.0,2\n";

}  // namespace

TEST_CASE("CSV: a plain file becomes a table: names, values row after row, line numbers") {
  TempDir dir;
  const CsvTable t = read_csv(write_csv(dir, "iris.csv", kIris));
  CHECK(t.columns == std::vector<std::string>{"sepal_len", "sepal_wid", "species"});
  CHECK(t.rows() == 3);
  CHECK(t.cols() == 3);
  CHECK(t.values == std::vector<double>{5.1, 3.5, 0, 6.2, 2.9, 1, 7.7, 3.0, 2});
  CHECK(t.lines == std::vector<int64_t>{2, 3, 4});
  CHECK(t.at(1, 1) == 2.9);
  CHECK(t.column_index("species") == 2);
}

TEST_CASE("CSV: CRLF, spaces, blank lines, quotes, '+', exponents and a byte-order mark") {
  TempDir dir;
  const std::string text =
      "\xEF\xBB\xBF"
      "  a , \"b, \"\"quoted\"\"\" ,c\r\n"
      "\r\n"
      "1, +2.5 ,\t-3e-2\r\n"
      "   \r\n"
      "\"4\",.5,1E3\r\n"
      "7,8.,-0\r\n"
      "\r\n"
      "\n";
  const CsvTable t = read_csv(write_csv(dir, "variants.csv", text));
  CHECK(t.columns == std::vector<std::string>{"a", "b, \"quoted\"", "c"});
  CHECK(t.values == std::vector<double>{1, 2.5, -0.03, 4, 0.5, 1000, 7, 8, -0.0});
  CHECK(t.lines == std::vector<int64_t>{3, 5, 6});
}

TEST_CASE("CSV: no final newline, one column, and numbers too small for a double read as 0") {
  TempDir dir;
  const CsvTable t = read_csv(write_csv(dir, "one.csv", "x\n1e-400\n-1e-400\n3"));
  CHECK(t.columns == std::vector<std::string>{"x"});
  CHECK(t.values == std::vector<double>{0.0, -0.0, 3.0});
  CHECK(t.lines == std::vector<int64_t>{2, 3, 4});
}

TEST_CASE("CSV: ';' and tab delimiters") {
  TempDir dir;
  CsvOptions semicolon;
  semicolon.delimiter = ';';
  const CsvTable a = read_csv(write_csv(dir, "a.csv", "x;y\n1;2\n"), semicolon);
  CHECK(a.values == std::vector<double>{1, 2});
  CsvOptions tab;
  tab.delimiter = '\t';
  const CsvTable b = read_csv(write_csv(dir, "b.tsv", "x\ty\tz\n1\t 2 \t3\n"), tab);
  CHECK(b.values == std::vector<double>{1, 2, 3});
  const std::string c = write_csv(dir, "c.tsv", "x\ty\tz\n1\t\t3\n");
  CHECK(error_of([&] { read_csv(c, tab); }) ==
        "CSV file " + c + ": line 2, column 2 (\"y\"): empty cell (missing values are not "
                          "supported: fill or drop them first)");
  CHECK(error_of([&] { read_csv(dir.file("a.csv"), CsvOptions{'"'}); }) ==
        "read_csv: the delimiter cannot be '\"' (use ',', ';' or '\\t')");
}

TEST_CASE("CSV: unnamed columns may repeat (pandas' index) and are named by index only") {
  TempDir dir;
  const CsvTable t = read_csv(write_csv(dir, "index.csv", ",a,\n0,1.5,2\n1,2.5,3\n"));
  CHECK(t.columns == std::vector<std::string>{"", "a", ""});
  const CsvData d = split_csv(t, {2}, CsvTarget::Labels, {"a"});
  CHECK(d.x.to_vector() == std::vector<float>{1.5f, 2.5f});
  CHECK(d.y.to_int_vector() == std::vector<int32_t>{2, 3});
  CHECK(error_of([&] { t.column_index(""); }) ==
        "CSV file " + t.path + ": no column named \"\"; the columns are (unnamed), \"a\", (unnamed)");
}

TEST_CASE("CSV: split by name or index into x (N, F) float32 and y, in the order asked") {
  TempDir dir;
  const CsvTable t = read_csv(write_csv(dir, "iris.csv", kIris));

  const CsvData by_name = split_csv(t, {"species"});
  CHECK(by_name.x.shape() == Shape{3, 2});
  CHECK(by_name.x.dtype() == DType::F32);
  CHECK(by_name.x.to_vector() == std::vector<float>{5.1f, 3.5f, 6.2f, 2.9f, 7.7f, 3.0f});
  CHECK(by_name.y.shape() == Shape{3});
  CHECK(by_name.y.dtype() == DType::F32);
  CHECK(by_name.y.to_vector() == std::vector<float>{0, 1, 2});
  CHECK(by_name.feature_names == std::vector<std::string>{"sepal_len", "sepal_wid"});
  CHECK(by_name.target_names == std::vector<std::string>{"species"});

  const CsvData labels = split_csv(t, {2}, CsvTarget::Labels);
  CHECK(labels.y.dtype() == DType::I32);
  CHECK(labels.y.shape() == Shape{3});
  CHECK(labels.y.to_int_vector() == std::vector<int32_t>{0, 1, 2});

  const CsvData two = split_csv(t, {"species", 0}, CsvTarget::Values, {std::string("sepal_wid")});
  CHECK(two.x.shape() == Shape{3, 1});
  CHECK(two.x.to_vector() == std::vector<float>{3.5f, 2.9f, 3.0f});
  CHECK(two.y.shape() == Shape{3, 2});
  CHECK(two.y.to_vector() == std::vector<float>{0, 5.1f, 1, 6.2f, 2, 7.7f});
  CHECK(two.target_names == std::vector<std::string>{"species", "sepal_len"});

  const CsvData no_target = split_csv(t, {});
  CHECK(no_target.x.shape() == Shape{3, 3});
  CHECK(!no_target.y.defined());

  const CsvData loaded = load_csv(t.path, {"species"}, CsvTarget::Labels);
  CHECK(loaded.x.to_vector() == by_name.x.to_vector());
  CHECK(loaded.y.to_int_vector() == std::vector<int32_t>{0, 1, 2});
}

TEST_CASE("CSV: a missing file, a directory, an empty file, blank lines only, a header only") {
  TempDir dir;
  const std::string missing = dir.file("missing.csv");
  CHECK(error_of([&] { read_csv(missing); }) == "CSV file " + missing + ": no such file");
  CHECK(error_of([&] { read_csv(dir.str()); }) ==
        "CSV file " + dir.str() + ": is a directory, not a file");
  check_refused("", "empty file (0 bytes)");
  check_refused("\n \r\n\t\n", "no header row: the file holds only blank lines");
  check_refused("a,b,c\n", "header only (line 1, 3 columns), no data rows");
  check_refused("\n\nonly\r\n\r\n", "header only (line 3, 1 column), no data rows");
}

TEST_CASE("CSV: a ragged row names its line and both column counts") {
  check_refused("a,b,c\n1,2,3\n4,5\n", "line 3 has 2 columns where the header (line 1) has 3");
  check_refused("a,b\n\n1,2,3\n", "line 3 has 3 columns where the header (line 1) has 2");
  check_refused("a,b\n1,2\n7\n", "line 3 has 1 column where the header (line 1) has 2");
}

TEST_CASE("CSV: a bad cell names its line, its column and header name, and its text") {
  check_refused("a,b\n1,\n", "line 2, column 2 (\"b\"): empty cell (missing values are not "
                             "supported: fill or drop them first)");
  check_refused("a,b\n1,2\n3,  \n", "line 3, column 2 (\"b\"): empty cell (missing values are "
                                    "not supported: fill or drop them first)");
  check_refused("a,b\n1,2\nabc,4\n", "line 3, column 1 (\"a\"): 'abc' is not a number");
  check_refused("a,b\n1,2x\n", "line 2, column 2 (\"b\"): '2x' is not a number");
  check_refused("a,b\n1,1,5\n", "line 2 has 3 columns where the header (line 1) has 2");
  check_refused("a,b\n1,NA\n", "line 2, column 2 (\"b\"): 'NA' is not a number");
  check_refused("a,b\n1,0x10\n", "line 2, column 2 (\"b\"): '0x10' is not a number");
  check_refused("a,b\n1,++1\n", "line 2, column 2 (\"b\"): '++1' is not a number");
  check_refused("a,b\n1,\x01\x7f\n", "line 2, column 2 (\"b\"): '\\x01\\x7f' is not a number");
  check_refused("a,b\n1," + std::string(50, 'z') + "\n",
                "line 2, column 2 (\"b\"): '" + std::string(40, 'z') + "...' is not a number");
  check_refused(",b\nq,1\n", "line 2, column 1 (unnamed): 'q' is not a number");
}

TEST_CASE("CSV: NaN and infinity are refused, as are numbers beyond float32") {
  const std::string refused =
      ": NaN and infinity are refused (a missing value? fill or drop it first)";
  check_refused("a,b\n1,nan\n", "line 2, column 2 (\"b\"): 'nan'" + refused);
  check_refused("a,b\n1,NaN\n", "line 2, column 2 (\"b\"): 'NaN'" + refused);
  check_refused("a,b\n-inf,1\n", "line 2, column 1 (\"a\"): '-inf'" + refused);
  check_refused("a,b\n1,Infinity\n", "line 2, column 2 (\"b\"): 'Infinity'" + refused);
  check_refused("a,b\n1,1e39\n",
                "line 2, column 2 (\"b\"): '1e39' is beyond float32's range (about 3.4e38)");
  check_refused("a,b\n1,-1e400\n",
                "line 2, column 2 (\"b\"): '-1e400' is beyond float32's range (about 3.4e38)");
  check_refused("a,b\n1," + std::string(400, '9') + ".5e-50\n",
                "line 2, column 2 (\"b\"): '" + std::string(40, '9') +
                    "...' is beyond float32's range (about 3.4e38)");
}

TEST_CASE("CSV: quotes that do not close, text after a quote, a name used twice") {
  check_refused("a,\"b\n1,2\n",
                "line 1, column 2: unterminated quote (a quoted cell must end on its own line)");
  check_refused("a,b\n1,\"2\n", "line 2, column 2 (\"b\"): unterminated quote (a quoted cell "
                                "must end on its own line)");
  check_refused("a,b\n\"1\"x,2\n", "line 2, column 1 (\"a\"): text after the closing quote");
  check_refused("x,y,x\n1,2,3\n", "columns 1 and 3 of the header (line 1) are both named \"x\"");
}

TEST_CASE("CSV: unknown, out-of-range, repeated and clashing columns; no features left") {
  TempDir dir;
  const CsvTable t = read_csv(write_csv(dir, "iris.csv", kIris));
  const std::string where = "CSV file " + t.path + ": ";
  CHECK(error_of([&] { split_csv(t, {"specis"}); }) ==
        where + "no column named \"specis\" (target); the columns are \"sepal_len\", "
                "\"sepal_wid\", \"species\"");
  CHECK(error_of([&] { split_csv(t, {"species"}, CsvTarget::Values, {"petal"}); }) ==
        where + "no column named \"petal\" (feature); the columns are \"sepal_len\", "
                "\"sepal_wid\", \"species\"");
  CHECK(error_of([&] { t.column_index("petal"); }) ==
        where + "no column named \"petal\"; the columns are \"sepal_len\", \"sepal_wid\", "
                "\"species\"");
  CHECK(error_of([&] { split_csv(t, {3}); }) ==
        where + "target column index 3 is out of range: the file has 3 columns (indices 0 to 2)");
  CHECK(error_of([&] { split_csv(t, {-1}); }) ==
        where + "target column index -1 is out of range: the file has 3 columns (indices 0 to 2)");
  CHECK(error_of([&] { split_csv(t, {"species", 2}); }) ==
        where + "column 3 (\"species\") is asked for twice");
  CHECK(error_of([&] { split_csv(t, {"species"}, CsvTarget::Values, {0, "species"}); }) ==
        where + "column 3 (\"species\") is both a target and a feature");
  CHECK(error_of([&] { split_csv(t, {0, 1, 2}); }) ==
        where + "no feature columns left: all 3 columns are targets");
  CHECK(error_of([&] { load_csv(t.path, {"nope"}); }).rfind(where + "no column named", 0) == 0);
}

TEST_CASE("CSV: labels must be whole numbers from 0 to 2^31 - 1, named by line and column") {
  TempDir dir;
  const auto refused = [&](const std::string& text, const std::string& message) {
    const CsvTable t = read_csv(write_csv(dir, "labels.csv", text));
    CHECK(error_of([&] { split_csv(t, {"y"}, CsvTarget::Labels); }) ==
          "CSV file " + t.path + ": " + message);
  };
  const std::string rule = " is not a class label (labels are whole numbers from 0 to 2147483647)";
  refused("x,y\n1,0\n\n2,2.5\n", "line 4, column 2 (\"y\"): 2.5" + rule);
  refused("x,y\n1,-1\n", "line 2, column 2 (\"y\"): -1" + rule);
  refused("x,y\n1,2147483648\n", "line 2, column 2 (\"y\"): 2147483648" + rule);
  const CsvTable big = read_csv(write_csv(dir, "big.csv", "x,y\n1,2147483647\n2,0\n"));
  CHECK(split_csv(big, {"y"}, CsvTarget::Labels).y.to_int_vector() ==
        std::vector<int32_t>{2147483647, 0});
}
